# exercise: encode
# kind: faulty
# class: aliasing
# rule: no state between calls and results in new objects ("函数不在调用之间保留任何状态" /
#       "结果放在新的对象里返回", notebook glossary). The memo on the tokenizer returns the very
#       same list object for a repeated text, so the caller's edits of one result leak into
#       the next call's result.
# shows: tok = Tokenizer(["<unk>", "a"]); ids = tok.encode("ab"); ids.append(7);
#        tok.encode("ab") now returns [1, 0, 7] instead of [1, 0].
def encode(self, text):
    if not isinstance(text, str):
        raise TypeError("encode expects a str")
    memo = self.__dict__.setdefault("_encode_memo", {})
    if text not in memo:
        memo[text] = [self.stoi.get(ch, self.unk_id) for ch in text]
    return memo[text]
