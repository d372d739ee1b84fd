# exercise: encode
# kind: faulty
# class: in-place
# rule: exercise functions only read their arguments ("练习函数只读传给它的参数：调用结束时，每个
#       参数...都必须和调用前一模一样", notebook glossary; self is an argument) and keep no state
#       between calls. This body uses setdefault on self.stoi, inserting every unknown
#       character into the tokenizer's dictionary (mapped to <unk>).
# shows: tok = Tokenizer(["<unk>", "a"]); tok.encode("ab") returns [1, 0] but afterwards
#        tok.stoi == {'<unk>': 0, 'a': 1, 'b': 0} (len(tok.stoi) 3 != vocab_size 2).
def encode(self, text):
    if not isinstance(text, str):
        raise TypeError("encode expects a str")
    return [self.stoi.setdefault(ch, self.unk_id) for ch in text]
