"""A repeated torch call reuses its checked args struct: the first call of a signature (every tensor
argument's shape, strides, dtype and device, and the call's other options) is checked in full and
its struct kept; a later call of the same signature copies that struct and sets only its tensors'
pointers. The C library still validates every launch (D8); what is skipped is the Python checking
that would find the same answer again."""

from .tensors import _reads_torch

_LIMIT = 4096  # signatures kept; past it the table starts again


class CheckedCalls:
    """The checked structs of one Runtime, by call signature."""

    def __init__(self):
        self.table = {}

    def __len__(self):
        return len(self.table)

    def signature(self, op, tensors, options):
        """The call's signature, or None when it cannot be reused: not every tensor argument is a torch
        tensor of one class (None stands for an optional tensor left out)."""
        kind = None
        sig = [op, options]
        for t in tensors:
            if t is None:
                sig.append(None)
                continue
            if kind is None:
                kind = type(t)
                if not _reads_torch(kind):
                    return None
            elif type(t) is not kind:
                return None
            sig.append((t.shape, t.stride(), t.dtype, t.get_device()))
        return None if kind is None else tuple(sig)

    def struct(self, sig, fields, tensors):
        """A copy of the struct kept for `sig` with the pointers of `tensors` set into `fields`; None
        when none is kept."""
        checked = self.table.get(sig)
        if checked is None:
            return None
        args = type(checked).from_buffer_copy(checked)
        for field, t in zip(fields, tensors):
            if t is not None:
                setattr(args, field, t.data_ptr())
        return args

    def keep(self, sig, args):
        if len(self.table) >= _LIMIT:
            self.table.clear()
        self.table[sig] = type(args).from_buffer_copy(args)
