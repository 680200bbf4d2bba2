"""Where make interop's time goes: each test file's total from the JUnit
report pytest wrote (build/interop.xml), longest first.

  deps/venv/bin/python scripts/test-times.py [--write] [build/interop.xml]

With --write, the times go to tests/interop/durations.json, which make
interop's scheduler reads to start the longest files first
(tests/interop/schedule.py).
"""
import collections
import json
import pathlib
import sys
import xml.etree.ElementTree as ET

args = [a for a in sys.argv[1:] if a != "--write"]
path = args[0] if args else "build/interop.xml"
per_file = collections.Counter()
count = collections.Counter()
for case in ET.parse(path).getroot().iter("testcase"):
    module = case.get("classname", "").split(".")[-1] or "?"
    per_file[module] += float(case.get("time", 0))
    count[module] += 1
total = sum(per_file.values())
for module, secs in per_file.most_common():
    print(f"{secs:8.1f} s  {count[module]:3d} tests  {module}")
print(f"{total:8.1f} s  in all (both workers together)")
if "--write" in sys.argv:
    out = pathlib.Path(__file__).resolve().parents[1] / "tests" / "interop" / "durations.json"
    out.write_text(json.dumps({f"{m}.py": round(s) for m, s in sorted(per_file.items())}, indent=1) + "\n")
    print(f"written: {out}")
