"""Sorting and selection: topk, sort, argsort."""
