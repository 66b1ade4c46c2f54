#!/usr/bin/env python3
"""How many of Shardy's propagation lit cases does `meshrun propagate` match?

Usage: tools/shardy_lit_coverage.py SHARDY_REPO [--meshrun BIN] [--only FILE]
                                   [--markdown] [--keep DIR]

SHARDY_REPO is a checkout or a bare git mirror of openxla/shardy; the tests
are read from it (`git show HEAD:path`), never copied into meshrun.

Each `shardy/dialect/sdy/transforms/propagation/test/*.mlir` file is split
into cases at `// -----`. The file's RUN line says which pass runs; it maps
to `meshrun propagate --strategy S [--conservative] [--keep-open]` (see
RUN_MAP). Per function of a case, the shardings the CHECK lines expect are
compared with the ones meshrun prints:

  * signature: the sharding of `%argN` / of the N-th result;
  * body: a CHECK statement (a CHECK or CHECK-NEXT line and its CHECK-SAME
    lines) that names an op and a sharding is matched with the next op of
    that name in meshrun's output (in print order), and their shardings
    compared. FileCheck variables inside a sharding (`[[X:.*]]`) match
    anything.

Whitespace is ignored; openness (`?`) and priorities are compared as
written, so single passes run with `--keep-open`, as Shardy's do.

A case is
  match          every checked sharding is meshrun's (or both reject it:
                 `expected-error`),
  mismatch       the first differing sharding (or op meshrun does not print),
  error          meshrun rejected the input (its message),
  n/a            the pass or option has no meshrun equivalent (which), or the
                 case checks no sharding ("not a sharding check").
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

TEST_DIR = "shardy/dialect/sdy/transforms/propagation/test/"

# (pass flag as in the RUN line, meshrun options or None with the reason).
RUN_MAP = [
    ("-sdy-populate-op-sharding-rules", None,
     "checks the #sdy.op_sharding_rule attached to each op (Shardy-internal "
     "pass); meshrun prints no rules, they are tested in compiler/tests/rules_*.rs"),
    ("dedup-functions-fully=true", None,
     "option dedup-functions-fully of the pipeline: meshrun has no "
     "function deduplication option"),
    ("-sdy-propagation-pipeline", ["--strategy", "full"], None),
    ("-sdy-aggressive-propagate", ["--strategy", "aggressive", "--keep-open"], None),
    ("-sdy-op-priority-propagate", ["--strategy", "op-priority", "--keep-open"], None),
    ("-sdy-user-priority-propagate", ["--strategy", "user-priority", "--keep-open"], None),
    ("-sdy-basic-propagate", ["--strategy", "basic", "--keep-open"], None),
]


def git_show(repo, path):
    return subprocess.run(["git", "-C", repo, "show", f"HEAD:{path}"],
                          check=True, capture_output=True, text=True).stdout


def lit_files(repo):
    out = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--name-only", "HEAD"],
                         check=True, capture_output=True, text=True).stdout
    return sorted(p for p in out.split() if p.startswith(TEST_DIR) and p.endswith(".mlir"))


def meshrun_options(run_line):
    for flag, opts, reason in RUN_MAP:
        if flag in run_line:
            if opts is None:
                return None, reason
            opts = list(opts)
            if "conservative-propagation=true" in run_line:
                opts.append("--conservative")
            return opts, None
    return None, "unknown pass in RUN line: " + run_line.strip()


# ---------------------------------------------------------------- shardings

# `#sdy.sharding<..>`, `#sdy.sharding_per_value<[..]>`, a data-flow edge's
# `sharding=<..>`, a constraint's or reshard's bare `<..>`, and a manual
# computation's `in_shardings=[<..>, ..]` / `out_shardings=[..]`.
PREFIX = "..."  # the last value of a sharding the CHECK line cuts short

SHARDING_START = re.compile(
    r"#sdy\.sharding(?:_per_value)?<|sharding=<"
    r"|sdy\.(?:sharding_constraint|reshard)\s+%[^\s<]+\s+<|(?:in|out)_shardings=\[")


def take_angle(text, start):
    """The text from `start` (just past a `<`) to its matching `>`."""
    depth = 1
    i = start
    while i < len(text):
        c = text[i]
        if c == "<":
            depth += 1
        elif c == ">" and text[i - 1] != "-":
            depth -= 1
            if depth == 0:
                return text[start:i], i + 1
        i += 1
    return text[start:], len(text)


def take_bracket(text, start):
    """The text from `start` (just past a `[`) to its matching `]`."""
    depth = 1
    for i in range(start, len(text)):
        if text[i] == "[":
            depth += 1
        elif text[i] == "]":
            depth -= 1
            if depth == 0:
                return text[start:i], i + 1
    return text[start:], len(text)


def split_top(text, sep=","):
    parts, depth, cur = [], 0, []
    for c in text:
        if c in "<[{(":
            depth += 1
        elif c in ">]})":
            depth -= 1
        if c == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    if cur:
        parts.append("".join(cur))
    return parts


def shardings_in(text):
    """[(pos, [per-value sharding bodies])] for every sharding in `text`; pos
    is where its text starts (past the op's name for a constraint)."""
    found = []
    for m in SHARDING_START.finditer(text):
        if m.group(0).endswith("["):
            body, end = take_bracket(text, m.end())
            body = "[" + re.sub(r"\s+", "", body) + "]"
        else:
            body, end = take_angle(text, m.end())
            body = re.sub(r"\s+", "", body)
        if m.group(0).startswith("#sdy.sharding_per_value") or m.group(0).endswith("["):
            inner = body[1:-1] if body.startswith("[") else body
            values = [v[1:-1] if v.startswith("<") else v for v in split_top(inner) if v]
        else:
            values = [body]
        if end == len(text) and not text.rstrip().endswith((">", "]")):
            # Cut short (FileCheck matches a prefix): the rest is unchecked.
            values = [v for v in values if v.endswith(">") or v.endswith("]")] + [PREFIX]
        found.append((m.end(), values))
    return found


def pattern_of(expected):
    """A regex for a CHECK-line sharding (FileCheck variables match anything)."""
    out, i = [], 0
    while i < len(expected):
        if expected.startswith("[[", i):
            j = expected.find("]]", i + 2)
            if j < 0:
                break
            var = expected[i + 2:j]
            if re.fullmatch(r"\w+(:.*)?", var):
                out.append(".*?")
                i = j + 2
                continue
        if expected.startswith("{{", i):
            j = expected.find("}}", i + 2)
            if j >= 0:
                out.append("(?:" + expected[i + 2:j] + ")")
                i = j + 2
                continue
        out.append(re.escape(expected[i]))
        i += 1
    return "".join(out)


def same(expected, actual):
    return re.fullmatch(pattern_of(expected), actual) is not None


def matches(expected, actual):
    if expected and expected[-1] == PREFIX:
        expected = expected[:-1]
        actual = actual[:len(expected)]
    return len(expected) == len(actual) and all(same(w, h) for w, h in zip(expected, actual))


# ---------------------------------------------------------------- signatures

def signature_shardings(sig):
    """{('arg', i) | ('result', i): per-value sharding} from a signature text."""
    out = {}
    arrow = sig.find("->")
    args, results = (sig, "") if arrow < 0 else (sig[:arrow], sig[arrow + 2:])
    markers = list(re.finditer(r"%(arg(\d+)|\[\[\w+(:[^\]]*)?\]\]|[\w]+):", args))
    for pos, values in shardings_in(args):
        before = [m for m in markers if m.start() < pos]
        if not before:
            continue
        m = before[-1]
        index = int(m.group(2)) if m.group(2) is not None else len(before) - 1
        out[("arg", index)] = values[0]
    types = list(re.finditer(r"tensor<|!stablehlo\.token|tuple<|!\w", results))
    for pos, values in shardings_in(results):
        n = sum(1 for t in types if t.start() < pos)
        if n:
            out[("result", n - 1)] = values[0]
    return out


# ---------------------------------------------------------------- CHECK lines

CHECK_RE = re.compile(r"//\s*CHECK(-[A-Z]+)?:(.*)$")
# An op's name (not an attribute's: `sdy.sharding = ...`). A line that closes
# a region (`}) {sdy.sharding = ...}`) carries the sharding of the op that
# opened it; both sides name it `}`.
OP_NAME = re.compile(
    r"\"?\b((?:stablehlo|sdy|mhlo|chlo|func)\.[\w.]+|call)\b(?!\s*[=<])|^\s*(\})")
# Shardy's pipeline prints constants it keeps apart as `sdy.constant`.
OP_ALIASES = {"sdy.constant": "stablehlo.constant"}


def op_name(text):
    m = OP_NAME.search(text)
    if m is None:
        return None
    name = m.group(1) or m.group(2)
    return OP_ALIASES.get(name, name)


def checks_by_function(case):
    """{func: {'sig': text, 'body': [statement text]}} from a case's CHECK lines."""
    funcs, order = {}, []
    cur = None
    in_sig = False
    for line in case.splitlines():
        m = CHECK_RE.search(line)
        if not m:
            continue
        kind, text = m.group(1) or "", m.group(2)
        if kind == "-LABEL":
            lm = re.search(r"^\s*(?:func(?:\.func)?\s+)?(?:(?:private|public)\s+)?@?([\w.$-]+)", text)
            if not lm:
                cur = None
                continue
            cur = lm.group(1)
            if cur not in funcs:
                funcs[cur] = {"sig": "", "body": []}
                order.append(cur)
            funcs[cur]["sig"] += text
            in_sig = True
        elif cur is None:
            continue
        elif kind == "-SAME":
            if in_sig:
                funcs[cur]["sig"] += " " + text
            elif funcs[cur]["body"]:
                funcs[cur]["body"][-1] += " " + text
        elif kind in ("", "-NEXT", "-DAG"):
            in_sig = False
            funcs[cur]["body"].append(text)
        elif kind == "-NOT" and "sdy.sharding" in text and funcs[cur]["body"]:
            # No sharding after the op just checked: it has none.
            funcs[cur]["body"][-1] += NO_SHARDING
    return {f: funcs[f] for f in order}


NO_SHARDING = " <no sharding>"


def expected_of(check):
    """[(key, op name or None, [per-value shardings])] that a function's checks expect."""
    out = []
    for key, value in sorted(signature_shardings(check["sig"]).items()):
        out.append((key, None, [value]))
    for stmt in check["body"]:
        shards = shardings_in(stmt)
        if not shards:
            name = op_name(stmt) if stmt.endswith(NO_SHARDING) else None
            if name is not None:
                out.append((("op",), name, []))
            continue
        # The op named before the first sharding.
        name = op_name(stmt[:shards[0][0]])
        if name is None:
            continue
        out.append((("op",), name, [v for _, vs in shards for v in vs]))
    return out


# ---------------------------------------------------------------- meshrun's output

def actual_by_function(text):
    """{func: {'sig': {key: sharding}, 'ops': [(op name, [shardings])]}}."""
    funcs, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"\s*func\.func\s+(?:(?:private|public)\s+)?@([\w.$-]+)\((.*)$", line)
        if m:
            cur = m.group(1)
            funcs[cur] = {"sig": signature_shardings(m.group(2)), "ops": []}
            continue
        if cur is None:
            continue
        body = re.sub(r"^\s*(%[\w#:]+(\s*,\s*%[\w#:]+)*\s*=\s*)?", "", line)
        shards = shardings_in(body)
        name = op_name(body[:shards[0][0]] if shards else body)
        if name is None:
            continue
        funcs[cur]["ops"].append((name, [v for _, vs in shards for v in vs]))
    return funcs


def compare(case, output):
    """None when every checked sharding matches, else the first difference."""
    checks = checks_by_function(case)
    actual = actual_by_function(output)
    checked = 0
    for func, check in checks.items():
        exp = expected_of(check)
        if not exp:
            continue
        if func not in actual:
            return f"@{func}: not in meshrun's output", checked
        got = actual[func]
        pos = 0
        for key, op, values in exp:
            checked += 1
            if op is None:
                have = got["sig"].get(key)
                want = values[0]
                label = f"%arg{key[1]}" if key[0] == "arg" else f"result {key[1]}"
                if have is None or not same(want, have):
                    return f"@{func} {label}: want <{want}>, meshrun <{have}>", checked
                continue
            # As FileCheck's CHECK: the next op of that name whose shardings
            # match; the first op of that name is the one reported otherwise.
            candidates = [i for i in range(pos, len(got["ops"])) if got["ops"][i][0] == op]
            if not candidates:
                return f"@{func}: no further {op} in meshrun's output (want <{' | '.join(values)}>)", checked
            hit = next((i for i in candidates if matches(values, got["ops"][i][1])), None)
            if hit is None:
                have = got["ops"][candidates[0]][1]
                return (f"@{func} {op}: want <{' | '.join(values)}>, meshrun <{' | '.join(have) or 'none'}>",
                        checked)
            pos = hit + 1
    return None, checked


# ---------------------------------------------------------------- driver

INTERNAL_OPS = re.compile(r"^[^/\n]*\b(sdy\.(?:func_)?data_flow_edge)\b", re.M)


def split_functions(text):
    """One piece per `func.func` (its CHECK lines before it) of an unsplit file."""
    starts = [m.start() for m in re.finditer(r"^(?://\s*CHECK-LABEL.*\n)", text, re.M)]
    if not starts:
        return [text]
    pieces = [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]
    return [p for p in pieces if "func.func" in p] or [text]


def case_name(case):
    label = re.search(r"CHECK-LABEL:\s*(?:func(?:\.func)?\s+)?(?:(?:private|public)\s+)?@?([\w.$-]+)", case)
    if label:
        return label.group(1)
    fn = re.search(r"func\.func\s+(?:(?:private|public)\s+)?@([\w.$-]+)", case)
    return fn.group(1) if fn else "(no function)"


def run_case(meshrun, opts, case, tmpdir, index):
    path = os.path.join(tmpdir, f"case{index}.mlir")
    with open(path, "w") as f:
        f.write(case)
    try:
        p = subprocess.run([meshrun, "propagate", *opts, path],
                           capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return "error", "timeout after 60 s"
    wants_error = "expected-error" in case
    if p.returncode != 0:
        msg = (p.stderr.strip().splitlines() or ["(no message)"])[-1]
        msg = msg.replace(path, "CASE")
        if wants_error:
            return "match", "both reject it"
        return "error", msg
    if wants_error:
        want = re.search(r"expected-error[^{]*\{\{(.*?)\}\}", case)
        return "mismatch", "Shardy rejects it" + (f" ({want.group(1)})" if want else "") + ", meshrun accepts it"
    diff, checked = compare(case, p.stdout)
    if diff is None and checked == 0:
        return "n/a", "not a sharding check"
    if diff is None:
        return "match", f"{checked} shardings"
    return "mismatch", diff


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("repo", help="openxla/shardy checkout or git mirror")
    ap.add_argument("--meshrun", default="target/release/meshrun")
    ap.add_argument("--only", help="only lit files whose name contains this")
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    ap.add_argument("--keep", help="write each case's input here")
    args = ap.parse_args()
    meshrun = os.path.abspath(args.meshrun)
    totals = {}
    rows = []
    tmp = args.keep or tempfile.mkdtemp(prefix="shardy_lit_")
    os.makedirs(tmp, exist_ok=True)
    for path in lit_files(args.repo):
        name = os.path.basename(path)
        if args.only and args.only not in name:
            continue
        text = git_show(args.repo, path)
        run = next((l for l in text.splitlines() if "RUN:" in l), "")
        opts, reason = meshrun_options(run)
        cases = re.split(r"^// -----.*$", text, flags=re.M) if "-split-input-file" in run else [text]
        cases = [c for c in cases if "func.func" in c]
        if opts is None and len(cases) == 1:
            # One case per function where the file is not split.
            cases = split_functions(cases[0])
        for i, case in enumerate(cases):
            internal = INTERNAL_OPS.search(case)
            if opts is None:
                status, detail = "n/a", reason
            elif internal:
                status, detail = "n/a", (f"the input holds {internal.group(1)}, an op Shardy's "
                                         "add-data-flow-edges pass makes; meshrun keeps data-flow "
                                         "edges internal (the pipeline files run the same programs)")
            else:
                status, detail = run_case(meshrun, opts, case, tmp, f"{name[:-5]}_{i}")
            rows.append((name, i, case_name(case), status, detail))
            t = totals.setdefault(name, {"cases": 0, "match": 0, "n/a": 0, "mismatch": 0, "error": 0})
            t["cases"] += 1
            t[status] += 1
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.markdown:
        print("| file | # | case | status | detail |")
        print("|---|---|---|---|---|")
        for name, i, case, status, detail in rows:
            print(f"| {name} | {i} | `{case}` | {status} | {detail.replace('|', '/')} |")
    else:
        for name, i, case, status, detail in rows:
            print(f"{name}:{i} @{case}: {status}: {detail}")
    print()
    print(f"{'file':<52} cases match  n/a mismatch error")
    grand = {"cases": 0, "match": 0, "n/a": 0, "mismatch": 0, "error": 0}
    for name, t in totals.items():
        print(f"{name:<52} {t['cases']:>5} {t['match']:>5} {t['n/a']:>4} {t['mismatch']:>8} {t['error']:>5}")
        for k in grand:
            grand[k] += t[k]
    g = grand
    print(f"{'total':<52} {g['cases']:>5} {g['match']:>5} {g['n/a']:>4} {g['mismatch']:>8} {g['error']:>5}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
