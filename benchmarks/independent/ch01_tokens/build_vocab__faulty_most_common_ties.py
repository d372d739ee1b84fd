# exercise: build_vocab
# kind: faulty
# class: rule
# rule: ties must be broken by ascending code point (tokens.py module docstring; notebook
#       section 1 and the exercise text: "most_common 在并列时按首次出现排序，不是本课程的约定").
#       This body relies on Counter.most_common, which breaks ties by first appearance.
# shows: build_vocab("疾風知勁草，板蕩識誠臣。勇夫安識義，智者必懷仁。\n", 4) gives
#        ['<unk>', '，', '識', '。'] instead of ['<unk>', '。', '識', '，'].
def build_vocab(text, max_size):
    keep = max(max_size - 1, 0)
    return [UNK] + [ch for ch, _ in Counter(text).most_common(keep)]
