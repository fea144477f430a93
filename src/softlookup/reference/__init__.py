"""The reviewer kit: a committed reference build per config, and the comparison of a rerun with it.

snapshot  copies a finished build's small outputs (PDF, tables, ledger, manifest), its
          provenance and the archive of what re-judging needs (archive: hypotheses, run
          settings, test sets, measurements) into results/reference/<config-name>/, whole
rejudge   scores and judges a reference again with today's code from that archive, through the
          workflow without its training, translating and measuring rules
compare   reads a rerun and a reference (or two builds of different configs) and says, item by
          item, whether each verdict and headline number is the same, within tolerance, or moved
"""
