# exercise: feedforward
# kind: faulty
# class: gradient
# rule: the FFN is part of the trained model ("FFN with biases", both layers learned; chapter 6
#       back-propagates through the linear layers along the same graph); this body detaches the
#       hidden activation, so fc1's weight and bias (and the input) receive no gradient.
# shows: ffn = FeedForward(Config(10, 6, 4, 2, 2, 8)); ffn(torch.randn(2, 3, 4)).sum().backward():
#        ffn.fc1.weight.grad is None (should be a non-zero [8, 4] tensor); output values identical.
def forward(self, x):
    hidden = self.activation(self.fc1(x)).detach()
    return self.dropout(self.fc2(hidden))
