# exercise: init_normal
# kind: correct
# class: value
# rule: instead of torch.no_grad(), fills weight.detach() (a view that shares weight's storage and does
#       not require grad) with normal_(0, std, generator); the caller's tensor/Parameter gets the same
#       numbers in place, and the original object is returned.
# shows: n/a (correct body)
def init_normal_(weight, std=INIT_STD, generator=None):
    storage_view = weight.detach()
    storage_view.normal_(mean=0.0, std=std, generator=generator)
    return weight
