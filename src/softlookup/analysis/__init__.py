"""Attention weights of trained models -> CSV (attention_maps); nothing is drawn here."""
