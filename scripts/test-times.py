"""Where make interop's time goes: each test file's total from the JUnit
report pytest wrote (build/interop.xml), longest first.

  deps/venv/bin/python scripts/test-times.py [build/interop.xml]
"""
import collections
import sys
import xml.etree.ElementTree as ET

path = sys.argv[1] if len(sys.argv) > 1 else "build/interop.xml"
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
