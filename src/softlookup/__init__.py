"""softlookup: attention as a soft lookup, reproduced as software."""
