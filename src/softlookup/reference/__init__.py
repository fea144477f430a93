"""The reviewer kit: a committed reference build per config, and the comparison of a rerun with it.

snapshot  copies a finished build's small outputs (PDF, tables, ledger, manifest) and its
          provenance into results/reference/<config-name>/
compare   reads a rerun and a reference (or two builds of different configs) and says, item by
          item, whether each verdict and headline number is the same, within tolerance, or moved
"""
