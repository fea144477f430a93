"""Fixed ids of the special tokens in the joint BPE vocabulary (the data side reserves the same)."""

PAD = 0
UNK = 1
BOS = 2
EOS = 3
