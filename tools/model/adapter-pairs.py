#!/usr/bin/env python3
"""Pairs of (prose that describes a failure, the error text it describes) from installed text only,
for the embedding-adapter experiment (tools/model/adapter.py, bench/RESULTS.md "Session 16:
a learned linear adapter"). Never reads the dev set or shared/eval.

Sources:
  man      section 2 and 3 man pages, ERRORS: the condition's description <-> "call: strerror"
           and "Error: ENAME: strerror, call" (the two ways programs print it)
  pyraise  Python sources (Debian stdlib, dist-packages, pyenv 3.11 site-packages): a function's
           documented "Raises" condition, or the comment just above the raise or its `if`,
           <-> "XError: the literal message"
  glossary src/core/error-glossary.json (tools/glossary/build-glossary.ts, installed docs):
           the explanation <-> the identifier (errno, signal, Python/Java exception, Rust code,
           SQLSTATE, pg_hba.conf, headers and libraries)
  debian   LEXICON.jsonl of tools/model/lexicon.ts: a package's short description <-> its name

  pysibling  (--siblings) two messages raised by one Python function <-> each other

Usage: python3 tools/model/adapter-pairs.py LEXICON.jsonl OUT.jsonl [--siblings]
"""

import ast
import gzip
import io
import json
import os
import re
import sys
import tokenize

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MAX_PROSE_WORDS = 60
# --siblings: also pair two messages raised by the same function (source "pysibling").
SIBLINGS = "--siblings" in sys.argv


def words(s):
    return len(s.split())


def clip(s, n=MAX_PROSE_WORDS):
    w = s.split()
    return " ".join(w[:n])


# ---------------------------------------------------------------- man pages
STRERROR = {}


def load_strerror():
    import errno as E

    for name, code in E.errorcode.items():
        pass
    for code, name in E.errorcode.items():
        STRERROR[name] = os.strerror(code)


ROFF_FONT = re.compile(r"\\f[BIRP]|\\f\(..|\\f\[[^\]]*\]")


def roff_text(lines):
    out = []
    for line in lines:
        if line.startswith('.\\"') or line.startswith("'\\\""):
            continue
        if line.startswith("."):
            parts = line.split(None, 1)
            macro = parts[0]
            rest = parts[1] if len(parts) > 1 else ""
            if macro in (".B", ".I", ".BR", ".IR", ".RB", ".RI", ".BI", ".IB", ".SM", ".SB"):
                toks = re.findall(r'"[^"]*"|\S+', rest)
                out.append("".join(t.strip('"') for t in toks) if macro not in (".B", ".I") else " ".join(t.strip('"') for t in toks))
            # other macros (.TP .PP .IP .RS .RE .BR without text) carry no words
            continue
        out.append(line)
    s = " ".join(out)
    s = ROFF_FONT.sub("", s)
    s = s.replace("\\-", "-").replace("\\(aq", "'").replace("\\(dq", '"').replace("\\(em", " - ").replace("\\ ", " ")
    s = re.sub(r"\\[&|^%]", "", s)
    s = re.sub(r"\\\*\(..|\\\*.", "", s)
    s = re.sub(r"\s+", " ", s).strip()
    return s


def man_pairs():
    load_strerror()
    pairs = []
    for sec in ("man2", "man3"):
        d = f"/usr/share/man/{sec}"
        for fn in sorted(os.listdir(d)):
            path = os.path.join(d, fn)
            if os.path.islink(path):
                continue
            try:
                raw = gzip.open(path, "rt", errors="replace").read() if fn.endswith(".gz") else open(path, errors="replace").read()
            except OSError:
                continue
            if raw.startswith(".so "):
                continue
            call = re.sub(r"\.\d\w*(\.gz)?$", "", fn)
            lines = raw.split("\n")
            try:
                start = next(i for i, l in enumerate(lines) if re.match(r"\.SH\s+\"?ERRORS", l))
            except StopIteration:
                continue
            end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith(".SH")), len(lines))
            body = lines[start + 1 : end]
            # .TP / name line(s) / description until the next .TP
            i = 0
            while i < len(body):
                if body[i].startswith(".TP"):
                    names = []
                    j = i + 1
                    while j < len(body) and (body[j].startswith(".B ") or body[j].startswith(".BR ")) and re.search(r"\bE[A-Z0-9]{2,}\b", body[j]):
                        names += re.findall(r"\bE[A-Z0-9]{2,}\b", body[j])
                        j += 1
                    k = j
                    while k < len(body) and not body[k].startswith(".TP") and not body[k].startswith(".SS"):
                        k += 1
                    desc = roff_text(body[j:k])
                    for name in names:
                        msg = STRERROR.get(name)
                        if not msg or words(desc) < 4:
                            continue
                        pairs.append(("man", clip(desc), f"{call}: {msg}"))
                        pairs.append(("man", clip(desc), f"Error: {name}: {msg[0].lower() + msg[1:]}, {call}"))
                    i = k
                else:
                    i += 1
    return pairs


# ---------------------------------------------------------------- Python raises
PY_DIRS = [
    "/usr/lib/python3.11",
    "/usr/lib/python3/dist-packages",
    os.path.expanduser("~/.pyenv/versions/3.11.7/lib/python3.11/site-packages"),
]
SKIP_DIR = re.compile(r"/(test|tests|idlelib|lib2to3/tests|__pycache__)(/|$)")


def literal_message(node):
    """The literal text of raise X("...") / X(f"...") / X("..." % y): constant parts joined."""
    if not isinstance(node, ast.Call) or not node.args:
        return None
    a = node.args[0]
    if isinstance(a, ast.BinOp) and isinstance(a.op, ast.Mod):
        a = a.left
    if isinstance(a, ast.Call) and isinstance(a.func, ast.Attribute) and a.func.attr == "format":
        a = a.func.value
    if isinstance(a, ast.Constant) and isinstance(a.value, str):
        s = a.value
    elif isinstance(a, ast.JoinedStr):
        s = "".join(v.value if isinstance(v, ast.Constant) else "X" for v in a.values)
    else:
        return None
    s = re.sub(r"%[-#0 +]*\d*(\.\d+)?[sdrfgxi]|\{[^}]*\}", "X", s)
    s = re.sub(r"\s+", " ", s).strip()
    if words(s) < 3 or len(s) > 300:
        return None
    return s


def exc_name(node):
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


RAISES_SPHINX = re.compile(r":raises?\s+([\w.]+)\s*:\s*(.+?)(?=\n\s*:|\n\s*\n|$)", re.S)


def documented_raises(doc):
    """{exception name: condition text} from Sphinx, Google and NumPy style Raises sections."""
    out = {}
    for m in RAISES_SPHINX.finditer(doc):
        out[m.group(1).split(".")[-1]] = m.group(2)
    lines = doc.split("\n")
    for i, l in enumerate(lines):
        if re.match(r"\s*Raises\s*:?\s*$", l):
            j = i + 1
            if j < len(lines) and re.match(r"\s*-{3,}\s*$", lines[j]):
                j += 1  # NumPy underline
            base = None
            cur = None
            while j < len(lines):
                line = lines[j]
                if not line.strip():
                    if cur:
                        cur = None
                    j += 1
                    if j < len(lines) and lines[j].strip() and base is not None and len(lines[j]) - len(lines[j].lstrip()) <= base and not re.match(r"\s*\w+(Error|Exception|Warning)\b", lines[j]):
                        break
                    continue
                ind = len(line) - len(line.lstrip())
                m = re.match(r"\s*([\w.]+(?:Error|Exception|Exit|Interrupt|Warning|Failure))\s*:?\s*(.*)$", line)
                if m and (base is None or ind <= base):
                    base = ind
                    cur = m.group(1).split(".")[-1]
                    out[cur] = m.group(2)
                elif base is not None and ind > base and cur:
                    out[cur] = (out[cur] + " " + line.strip()).strip()
                elif base is not None and ind < base:
                    break
                j += 1
    cleaned = {}
    for k, v in out.items():
        v = re.sub(r"``?|:\w+:", "", v)
        v = re.sub(r"\s+", " ", v).strip()
        if words(v) >= 3:
            cleaned[k] = clip(v)
    return cleaned


def comments_by_line(src):
    out = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(src).readline):
            if tok.type == tokenize.COMMENT:
                out[tok.start[0]] = tok.string.lstrip("#").strip()
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return out


def comment_above(comments, line):
    """The comment block that ends on the line just above `line`."""
    texts = []
    l = line - 1
    while l in comments:
        texts.append(comments[l])
        l -= 1
    s = " ".join(reversed(texts))
    if words(s) < 4 or re.search(r"noqa|type: ignore|pragma|pylint|TODO|XXX|FIXME", s):
        return None
    return clip(s)


def py_pairs():
    pairs = []
    seen_files = set()
    for root_dir in PY_DIRS:
        for dirpath, dirnames, filenames in os.walk(root_dir):
            if SKIP_DIR.search(dirpath):
                dirnames[:] = []
                continue
            for fn in filenames:
                if not fn.endswith(".py"):
                    continue
                path = os.path.join(dirpath, fn)
                rel = os.path.relpath(path, root_dir)
                if rel in seen_files:
                    continue  # the same module in two installs
                seen_files.add(rel)
                try:
                    src = open(path, encoding="utf-8").read()
                    tree = ast.parse(src)
                except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
                    continue
                comments = None
                parents = {}
                for node in ast.walk(tree):
                    for child in ast.iter_child_nodes(node):
                        parents[child] = node
                for fnode in ast.walk(tree):
                    if not isinstance(fnode, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        continue
                    doc = ast.get_docstring(fnode) or ""
                    documented = documented_raises(doc) if "aise" in doc else {}
                    errors = []
                    for node in ast.walk(fnode):
                        if not isinstance(node, ast.Raise) or node.exc is None:
                            continue
                        msg = literal_message(node.exc)
                        name = exc_name(node.exc)
                        if not msg or not name:
                            continue
                        error = f"{name}: {msg}"
                        errors.append(error)
                        if name in documented:
                            pairs.append(("pyraise-doc", documented[name], error))
                        if comments is None:
                            comments = comments_by_line(src)
                        c = comment_above(comments, node.lineno)
                        parent = parents.get(node)
                        if not c and isinstance(parent, ast.If) and parent.body and parent.body[0] is node:
                            c = comment_above(comments, parent.lineno)
                        if c:
                            pairs.append(("pyraise-comment", c, error))
                    if SIBLINGS:
                        # Two messages raised by one function: related errors of one operation.
                        distinct = list(dict.fromkeys(errors))[:6]
                        for i in range(len(distinct)):
                            for j in range(i + 1, len(distinct)):
                                pairs.append(("pysibling", distinct[i], distinct[j]))
    return pairs


# ---------------------------------------------------------------- glossary, Debian
def glossary_pairs():
    g = json.load(open(os.path.join(ROOT, "src/core/error-glossary.json")))
    pairs = []
    for kind in ("errno", "signal", "python", "rust", "java", "sqlstate", "file"):
        for ident, text in g.get(kind, {}).items():
            if not isinstance(text, str) or words(text) < 2:
                continue
            target = f"error[{ident}]" if kind == "rust" else f"SQLSTATE {ident}" if kind == "sqlstate" else ident
            pairs.append(("glossary-" + kind, clip(text), target))
    packages = g.get("packages", {})
    for kind in ("headers", "libraries"):
        for ident, pkg in g.get(kind, {}).items():
            text = packages.get(pkg)
            if isinstance(text, str) and words(text) >= 3:
                pairs.append(("glossary-" + kind, clip(text), ident))
    for k, msg_name in g.get("errno_messages", {}).items():
        text = g.get("errno", {}).get(msg_name)
        if isinstance(text, str) and words(text) >= 3:
            pairs.append(("glossary-errno-message", clip(text), k))
    return pairs


def debian_pairs(lexicon_path):
    pairs = []
    for line in open(lexicon_path):
        e = json.loads(line)
        if e["source"] not in ("debian", "npm", "man"):
            continue
        if words(e["text"]) < 3:
            continue
        pairs.append(("lexicon-" + e["source"], clip(e["text"]), e["name"]))
    return pairs


def main():
    lexicon, out = [a for a in sys.argv[1:] if not a.startswith("--")]
    all_pairs = []
    for name, fn in (("man", man_pairs), ("python", py_pairs), ("glossary", glossary_pairs), ("debian", lambda: debian_pairs(lexicon))):
        p = fn()
        print(f"{name}: {len(p)} pairs", file=sys.stderr)
        all_pairs += p
    seen = set()
    n = 0
    with open(out, "w") as f:
        for src, prose, error in all_pairs:
            key = (prose, error)
            if key in seen or prose == error:
                continue
            seen.add(key)
            f.write(json.dumps({"source": src, "prose": prose, "error": error}) + "\n")
            n += 1
    print(f"wrote {n} pairs to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
