"""Identity is bytes: a static check that keeps Swift's canonical-equivalence string semantics out of the code that
decides access or identity (docs/testing.md "Identity lint").

Swift's `String` `==`, `<`, hashing, `hasPrefix`, `contains` and `split` follow Unicode canonical equivalence and
grapheme clusters: "caf\\u{E9}" == "cafe\\u{301}", "\\u{212A}" (KELVIN SIGN) == "K", and "dir/\\u{301}x" does not
start with "dir/". On an identity (object name, bucket, uid, token, key id, prefix, cursor...) that is a hole. The
project's byte-exact helpers are in Sources/PortcullisCore/Text/ExactString.swift.

The check is lexical. In the identity-bearing source paths, a line of code is a finding when an *identity-named*
operand — the last identifier of an expression chain contains one of IDENTITY_WORDS as a camelCase word, e.g.
`object.name`, `request.bucket`, `keyID`, `requestPath[i]` — is used with

  1. `==` `!=` `<` `<=` `>` `>=`, unless the other operand is nil, a number, true/false, an enum case (`.x`), or a
     string literal that nothing else is canonically equivalent to (ASCII without `K`, `;`, `` ` ``, which U+212A,
     U+037E and U+1FEF decompose to);
  2. `.hasPrefix(` `.hasSuffix(` `.contains(` `.firstIndex(of:` `.firstRange(of:` `.split(separator:`
     `.components(` `.sorted()` `.min()` `.max()` on it (or with it as the argument), or `Set(` built from it;
  3. a `Set<String>` or `[String: ...]` declared for an identity-named value (`var names: Set<String>`,
     `byKeyID = [String: Int]()`), except the JSON-derived maps of KEYED_DICTIONARIES (claims, custom metadata,
     JSON members): their keys are pairwise inequivalent by construction (the JSON parser refuses equivalent
     member names) and rule 4 polices every access to them;
  4. a subscript of such a dictionary (`claims[k]`, `customMetadata[k] = v`, `members[k]`) other than
     `[exactly: k]` or a safe literal key.

A finding is accepted when the line, or a comment line directly above it, says `// identity-ok: <reason>`
(a reason is required). Comments and string literal contents are ignored; multi-line string literals are skipped.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

#: The source paths whose code decides access or identity.
IDENTITY_PATHS = [
    "Sources/Rules/Runtime", "Sources/Rules/Library", "Sources/Rules/API",
    "Sources/Auth",
    "Sources/Storage",
    "Sources/PortcullisCore/Objects", "Sources/PortcullisCore/JSON",
    "Sources/Service", "Sources/Gateway",
]
#: Paths whose known findings are listed in identity_baseline.txt until their owners fix them.
BASELINED_PATHS = ["Sources/Service", "Sources/Gateway"]

IDENTITY_WORDS = {
    "name", "names", "bucket", "buckets", "uid", "uids", "token", "tokens", "prefix", "prefixes", "delimiter",
    "kid", "keyid", "id", "ids", "handle", "handles", "path", "paths", "issuer", "iss", "audience", "aud",
    "cursor", "session", "folder", "claims", "metadata", "key", "keys", "members",
}
#: Identifiers that hold numbers or bytes although they contain an identity word.
NOT_TEXT = {"blobID", "blobIDs", "signingKey", "secretKey"}
#: A last camelCase word that makes an identifier a number (`maxNameBytes`, `prefixCount`, `pathLength`).
NUMERIC_WORDS = {"bytes", "count", "size", "length", "offset", "index", "seconds", "limit"}
#: Dictionaries keyed by identity text (rule 4).
KEYED_DICTIONARIES = {"claims", "metadata", "members"}

MARKER = re.compile(r"//\s*identity-ok:\s*\S")
CHAIN = r"[A-Za-z_$][\w$]*(?:\??!?(?:\.[A-Za-z_]\w*|\[[^\[\]]*\]|\((?:[^()]|\([^()]*\))*\)))*"
LEFT_OPERAND = re.compile(r"(" + CHAIN + r"|\"[SU]\"|-?\d[\w.]*|\.[A-Za-z_]\w*)\s*$")
RIGHT_OPERAND = re.compile(r"^\s*(" + CHAIN + r"|\"[SU]\"|-?\d[\w.]*|\.[A-Za-z_]\w*)")
COMPARISON = re.compile(r"(?<=\s)(==|!=|<=|>=|<|>)(?=\s)")
METHODS = re.compile(r"(" + CHAIN + r")\.(hasPrefix|hasSuffix|contains|firstIndex(?=\(of:)|firstRange(?=\(of:)|"
                     r"split(?=\(separator:)|components|sorted(?=\(\))|min(?=\(\))|max(?=\(\)))\(([^()]*)\)")
SET_INIT = re.compile(r"\bSet\(([^()]*)\)")
STRING_COLLECTION = re.compile(r"([A-Za-z_]\w*)\??\s*[:=]\s*(?:Set<String>|\[String\s*:)")
SUBSCRIPT = re.compile(r"\b([A-Za-z_]\w*)\??\[([^\[\]]*)\]")
UNSAFE_LITERAL_CHARS = set("K;`")


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    rule: str
    code: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.rule}: {self.code}"


def words(identifier: str) -> set[str]:
    parts = re.findall(r"[A-Z]+(?=[A-Z][a-z]|\b|[0-9_])|[A-Z]?[a-z]+|[A-Z]+|\d+", identifier)
    return {p.lower() for p in parts}


def last_identifier(chain: str) -> str | None:
    """The identifier an expression chain ends in, looking through subscripts and optional marks:
    `request.auth?.uid` -> uid, `host.requestPath[i]` -> requestPath, `f(x)` -> None (a call's result)."""
    chain = chain.strip()
    while True:
        stripped = re.sub(r"(\[[^\[\]]*\]|[?!])$", "", chain)
        if stripped == chain:
            break
        chain = stripped
    if chain.endswith(")"):
        return None
    match = re.search(r"([A-Za-z_]\w*)$", chain)
    return match.group(1) if match else None


def is_identity(chain: str) -> bool:
    if chain.strip().startswith("."):
        return False  # an enum case
    name = last_identifier(chain)
    if name is None or name in NOT_TEXT:
        return False
    parts = re.findall(r"[A-Z]+(?=[A-Z][a-z]|\b|[0-9_])|[A-Z]?[a-z]+|[A-Z]+|\d+", name)
    if parts and parts[-1].lower() in NUMERIC_WORDS:
        return False
    return bool(words(name) & IDENTITY_WORDS)


def exempt_operand(operand: str, equality: bool) -> bool:
    operand = operand.strip()
    if operand in ("nil", "true", "false") or re.fullmatch(r"-?\d[\w.]*", operand):
        return True
    if re.match(r"(U?Int\d*|Double|Float|ExactString)\(", operand):
        return True  # numbers, or an ExactString (which compares bytes)
    if operand.startswith(".") or re.search(r"\.(count|isEmpty|utf8|utf16|unicodeScalars)$", operand):
        return True
    return equality and operand == '"S"'


def sanitize(source: str) -> list[str]:
    """Per line: code with comments removed and each string literal replaced by "S" (a literal no other string
    is canonically equivalent to) or "U"; lines inside multi-line string literals become empty."""
    out: list[str] = []
    in_block_comment = False
    in_multiline = False
    for raw in source.split("\n"):
        if in_multiline:
            out.append("")
            if '"""' in raw:
                in_multiline = False
            continue
        line, i, code = raw, 0, []
        while i < len(line):
            if in_block_comment:
                end = line.find("*/", i)
                if end < 0:
                    i = len(line)
                    continue
                in_block_comment, i = False, end + 2
                continue
            if line.startswith("//", i):
                break
            if line.startswith("/*", i):
                in_block_comment, i = True, i + 2
                continue
            if line.startswith('"""', i) or line.startswith('#"""', i):
                if line.count('"""', i) == 1:
                    in_multiline = True
                code.append('"U"')
                break
            if line[i] == '"' or line.startswith('#"', i):
                raw_string = line[i] == "#"
                j = i + (2 if raw_string else 1)
                text = []
                while j < len(line):
                    if not raw_string and line[j] == "\\":
                        text.append(line[j:j + 2])
                        j += 2
                        continue
                    if line[j] == '"':
                        break
                    text.append(line[j])
                    j += 1
                literal = "".join(text)
                safe = literal.isascii() and "\\" not in literal and not (set(literal) & UNSAFE_LITERAL_CHARS)
                code.append('"S"' if safe else '"U"')
                i = j + (2 if raw_string else 1)
                continue
            code.append(line[i])
            i += 1
        out.append("".join(code))
    return out


def check_line(code: str) -> list[str]:
    """The rules a sanitized line of code breaks (empty when none)."""
    broken: list[str] = []
    for match in COMPARISON.finditer(code):
        op = match.group(1)
        if op in ("<", ">") and re.search(r"\w<\s*$", code[:match.start()]):
            continue  # generic parameter list
        left = LEFT_OPERAND.search(code[:match.start()])
        right = RIGHT_OPERAND.search(code[match.end():])
        if not left or not right:
            continue
        lhs, rhs = left.group(1), right.group(1)
        equality = op in ("==", "!=")
        if (is_identity(lhs) and not exempt_operand(rhs, equality)) or \
           (is_identity(rhs) and not exempt_operand(lhs, equality)):
            broken.append(f"'{op}' on an identity ({lhs} {op} {rhs})")
    for match in METHODS.finditer(code):
        receiver, method, argument = match.group(1), match.group(2), match.group(3) or ""
        if "ExactString(" in argument:
            continue
        argument = re.sub(r"^\s*(of|separator):\s*", "", argument)
        if is_identity(receiver) or (method in ("contains", "firstIndex") and argument
                                     and is_identity(argument.split(",")[0])):
            broken.append(f"String.{method} on an identity ({receiver})")
    for match in SET_INIT.finditer(code):
        if is_identity(match.group(1)) and "ExactString" not in match.group(1):
            broken.append(f"Set of identity strings ({match.group(1)})")
    for match in STRING_COLLECTION.finditer(code):
        name = match.group(1)
        if is_identity(name) and not words(name) & KEYED_DICTIONARIES:
            broken.append(f"String-keyed collection of identities ({name})")
    for match in SUBSCRIPT.finditer(code):
        name, index = match.group(1), match.group(2).strip()
        if words(name) & KEYED_DICTIONARIES and name not in NOT_TEXT and not index.startswith("exactly:") \
                and index != '"S"' and not re.fullmatch(r"\d+|[a-z]\w*\.(startIndex|endIndex)", index):
            broken.append(f"String-keyed subscript of {name}")
    return broken


def lint_file(path: Path, root: Path = ROOT) -> list[Finding]:
    source = path.read_text(encoding="utf-8")
    raw_lines = source.split("\n")
    findings = []
    for number, code in enumerate(sanitize(source), start=1):
        if not code.strip():
            continue
        raw = raw_lines[number - 1]
        above = raw_lines[number - 2].strip() if number >= 2 else ""
        if MARKER.search(raw) or (above.startswith("//") and MARKER.search(above)):
            continue
        for rule in check_line(code):
            findings.append(Finding(str(path.relative_to(root)), number, rule, raw.strip()))
    return findings


def lint(paths: list[str] = IDENTITY_PATHS, root: Path = ROOT) -> list[Finding]:
    findings: list[Finding] = []
    for base in paths:
        for path in sorted((root / base).rglob("*.swift")):
            findings += lint_file(path, root)
    return findings


if __name__ == "__main__":
    for finding in lint():
        print(finding)
