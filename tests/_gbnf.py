"""A GBNF recognizer for the tests: does a grammar (llama.cpp's format) accept a text?

Why this exists: llama.cpp's own grammar parser comes only with llama.cpp (the PyPI
`llama-cpp-python` builds all of llama.cpp), too heavy for this machine's test runs, so the
tool-call grammars of `lgembed.models.grammar` are checked with this independent
implementation of the GBNF syntax llama.cpp documents (grammars/README.md): rules
`name ::= alternatives`, string literals with escapes (\\n \\t \\r \\" \\\\ \\xHH \\uHHHH),
character classes `[...]`/`[^...]` with ranges, `.`, grouping, `|`, and the repetition
operators `*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}`. It parses strictly (an unknown token or
an undefined rule is an error, as in llama.cpp) and recognizes by memoized search of every
end position (grammars without left recursion, which llama.cpp also requires).
"""

from __future__ import annotations

import sys
from functools import lru_cache


class GBNFSyntaxError(ValueError):
    pass


class _P:
    def __init__(self, text: str) -> None:
        self.t = text
        self.i = 0

    def ws(self, newlines: bool = True) -> None:
        t = self.t
        while self.i < len(t):
            c = t[self.i]
            if c == "#":
                while self.i < len(t) and t[self.i] != "\n":
                    self.i += 1
            elif c in " \t" or (newlines and c in "\r\n"):
                self.i += 1
            else:
                break

    def name(self) -> str:
        j = self.i
        while self.i < len(self.t) and (self.t[self.i].isalnum() or self.t[self.i] in "-_"):
            self.i += 1
        if j == self.i:
            raise GBNFSyntaxError(f"expected a name at {self.i}: {self.t[self.i:self.i + 20]!r}")
        return self.t[j : self.i]

    def char(self, end: str) -> int:
        t = self.t
        if self.i >= len(t):
            raise GBNFSyntaxError("unexpected end of grammar")
        c = t[self.i]
        if c == "\\":
            e = t[self.i + 1]
            self.i += 2
            simple = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "[": "[", "]": "]", "-": "-", "^": "^"}
            if e in simple:
                return ord(simple[e])
            n = {"x": 2, "u": 4, "U": 8}.get(e)
            if n is None:
                raise GBNFSyntaxError(f"unknown escape \\{e} at {self.i}")
            v = int(t[self.i : self.i + n], 16)
            self.i += n
            return v
        self.i += 1
        return ord(c)


def parse(text: str) -> dict:
    """The rules of a GBNF grammar: name -> node.

    Raises:
        GBNFSyntaxError: a syntax error or a reference to an undefined rule.
    """
    p = _P(text)
    rules: dict = {}
    p.ws()
    while p.i < len(p.t):
        name = p.name()
        p.ws(False)
        if not p.t.startswith("::=", p.i):
            raise GBNFSyntaxError(f"expected ::= after {name}")
        p.i += 3
        rules[name] = _alts(p, top=True)
        p.ws()
    for node in rules.values():
        _check_refs(node, rules)
    if "root" not in rules:
        raise GBNFSyntaxError("no root rule")
    return rules


def _check_refs(node: tuple, rules: dict) -> None:
    kind = node[0]
    if kind == "ref" and node[1] not in rules:
        raise GBNFSyntaxError(f"undefined rule {node[1]}")
    if kind in ("alt", "seq"):
        for n in node[1]:
            _check_refs(n, rules)
    if kind == "rep":
        _check_refs(node[1], rules)


def _alts(p: _P, top: bool = False) -> tuple:
    alts = [_seq(p, top)]
    while p.i < len(p.t) and p.t[p.i] == "|":
        p.i += 1
        alts.append(_seq(p, top))
    return ("alt", tuple(alts))


def _seq(p: _P, top: bool) -> tuple:
    items: list = []
    while True:
        # inside parentheses newlines are whitespace; at top level a newline ends the rule
        p.ws(newlines=not top)
        if top and p.i < len(p.t) and p.t[p.i] in "\r\n":
            # a rule continues on the next line only after | or inside (...)
            j = p.i
            p.ws()
            if p.i < len(p.t) and p.t[p.i] == "|":
                continue
            p.i = j
            break
        if p.i >= len(p.t) or p.t[p.i] in "|)":
            break
        items.append(_postfix(p, _atom(p)))
    return ("seq", tuple(items))


def _atom(p: _P) -> tuple:
    t = p.t
    c = t[p.i]
    if c == '"':
        p.i += 1
        chars = []
        while t[p.i] != '"':
            chars.append(chr(p.char('"')))
        p.i += 1
        return ("lit", "".join(chars))
    if c == "[":
        p.i += 1
        neg = t[p.i] == "^"
        if neg:
            p.i += 1
        ranges = []
        while t[p.i] != "]":
            lo = p.char("]")
            if t[p.i] == "-" and t[p.i + 1] != "]":
                p.i += 1
                hi = p.char("]")
            else:
                hi = lo
            ranges.append((lo, hi))
        p.i += 1
        return ("cls", tuple(ranges), neg)
    if c == "(":
        p.i += 1
        node = _alts(p)
        p.ws()
        if p.i >= len(t) or t[p.i] != ")":
            raise GBNFSyntaxError(f"expected ) at {p.i}")
        p.i += 1
        return node
    if c == ".":
        p.i += 1
        return ("cls", (), True)  # any character
    if c.isalnum() or c in "-_":
        return ("ref", p.name())
    raise GBNFSyntaxError(f"unexpected {c!r} at {p.i}")


def _postfix(p: _P, node: tuple) -> tuple:
    t = p.t
    while p.i < len(t):
        c = t[p.i]
        if c == "*":
            node = ("rep", node, 0, None)
        elif c == "+":
            node = ("rep", node, 1, None)
        elif c == "?":
            node = ("rep", node, 0, 1)
        elif c == "{":
            j = t.index("}", p.i)
            body = t[p.i + 1 : j]
            if "," in body:
                lo_s, hi_s = body.split(",", 1)
                lo, hi = int(lo_s.strip()), (int(hi_s) if hi_s.strip() else None)
            else:
                lo = hi = int(body)
            node = ("rep", node, lo, hi)
            p.i = j
        else:
            break
        p.i += 1
    return node


def accepts(grammar: str | dict, text: str) -> bool:
    """Whether the grammar's root rule matches all of `text`.

    Raises:
        GBNFSyntaxError: the grammar does not parse.
    """
    rules = parse(grammar) if isinstance(grammar, str) else grammar
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))

    @lru_cache(maxsize=None)
    def ends(node: tuple, i: int) -> frozenset:
        kind = node[0]
        if kind == "lit":
            s = node[1]
            return frozenset([i + len(s)]) if text.startswith(s, i) else frozenset()
        if kind == "cls":
            if i >= len(text):
                return frozenset()
            o = ord(text[i])
            hit = any(lo <= o <= hi for lo, hi in node[1])
            return frozenset([i + 1]) if hit != node[2] else frozenset()
        if kind == "ref":
            return ends(rules[node[1]], i)
        if kind == "alt":
            out: set = set()
            for n in node[1]:
                out |= ends(n, i)
            return frozenset(out)
        if kind == "seq":
            cur = {i}
            for n in node[1]:
                nxt: set = set()
                for j in cur:
                    nxt |= ends(n, j)
                cur = nxt
                if not cur:
                    break
            return frozenset(cur)
        if kind == "rep":
            _, sub, lo, hi = node
            out = set()
            cur = {i}
            count = 0
            seen: set = set()
            if lo == 0:
                out |= cur
            while cur and (hi is None or count < hi):
                nxt = set()
                for j in cur:
                    nxt |= ends(sub, j)
                count += 1
                nxt -= seen if count > lo else set()
                if count >= lo:
                    out |= nxt
                seen |= nxt
                cur = nxt
            return frozenset(out)
        raise AssertionError(kind)

    return len(text) in ends(rules["root"], 0)
