#!/usr/bin/python3
"""Replace the generated part of a Markdown file.

  splice.py NAME TABLE.md DOC.md
Replaces the lines between "<!-- NAME begin..." and "<!-- NAME end -->" in
DOC.md with the contents of TABLE.md (make validation: docs/validation.md).
Exits 1, changing nothing, if DOC.md lacks either marker.
"""
import sys

name, table, doc = sys.argv[1:4]
text = open(doc).read()
begin, end = f"<!-- {name} begin", f"<!-- {name} end -->"
i = text.find(begin)
j = text.find(end, i if i >= 0 else 0)
if i < 0 or j < 0:
    sys.exit(f"splice.py: {doc}: no '{begin}' ... '{end}' markers")
i = text.index("\n", i) + 1
with open(doc, "w") as f:
    f.write(text[:i] + open(table).read() + text[j:])
