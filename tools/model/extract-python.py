#!/usr/bin/env python3
"""Extracts training text from Python source trees: docstrings and the messages of raised
exceptions and warnings, written as "ExcName: message" so they read like real error lines.

Usage: extract-python.py OUT_FILE ROOT [ROOT...]
One paragraph per output line; files are visited in sorted order so the output is stable.
"""
import ast
import os
import sys


SKIP_DIRS = {"test", "tests", "__pycache__", "site-packages", "dist-packages", "idlelib", "lib2to3"}


def const_text(node):
    """Text of a string constant, an f-string (placeholders become nothing) or a '%' format."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return " ".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mod, ast.Add)):
        return const_text(node.left)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return const_text(node.func.value)
    return None


def call_name(func):
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def clean(s):
    s = s.replace("%s", " ").replace("%r", " ").replace("%d", " ").replace("{}", " ").replace("{!r}", " ")
    return " ".join(s.split())


def extract(path, out):
    try:
        with open(path, "rb") as f:
            src = f.read()
        tree = ast.parse(src, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return 0
    n = 0
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=True)
            if doc:
                # Paragraphs of the docstring become separate lines.
                for para in doc.split("\n\n"):
                    p = clean(para)
                    if len(p) > 2:
                        out.write(p + "\n")
                        n += 1
        elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            name = call_name(node.exc.func)
            if name and node.exc.args:
                msg = const_text(node.exc.args[0])
                if msg:
                    out.write(clean(name + ": " + msg) + "\n")
                    n += 1
        elif isinstance(node, ast.Call) and call_name(node.func) == "warn" and node.args:
            msg = const_text(node.args[0])
            if msg:
                cat = call_name(node.args[1]) if len(node.args) > 1 else None
                out.write(clean((cat + ": " if cat else "") + msg) + "\n")
                n += 1
    return n


def main():
    out_path, roots = sys.argv[1], sys.argv[2:]
    sys.setrecursionlimit(10000)
    files = []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            # Test suites are mostly assertions; site-packages is its own source when wanted.
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            for fn in sorted(filenames):
                if fn.endswith(".py"):
                    files.append(os.path.join(dirpath, fn))
    total = 0
    with open(out_path, "w", encoding="utf-8", errors="replace") as out:
        for p in files:
            total += extract(p, out)
    print(f"python: {len(files)} files, {total} paragraphs", file=sys.stderr)


if __name__ == "__main__":
    main()
