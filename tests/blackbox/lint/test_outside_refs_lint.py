"""The stand-alone docs lint (outside_refs_lint.py): no file in the repository cites a document outside it.
docs/testing.md describes the rule."""
import pytest

from outside_refs_lint import lint, lint_text, tracked_files


def test_repository_cites_only_its_own_documents() -> None:
    findings = lint()
    assert not findings, "citations of documents outside the repository (point at docs/, openapi/ or README.md, " \
                         "or state the fact):\n" + "\n".join(map(str, findings))


def test_the_lint_reads_the_tree() -> None:
    """It must see Swift sources, docs and tests, or the check above would pass on nothing."""
    files = tracked_files()
    assert any(f.startswith("Sources/") and f.endswith(".swift") for f in files)
    assert "README.md" in files and "docs/architecture.md" in files
    assert any(f.startswith("tests/blackbox/") for f in files)


@pytest.mark.parametrize("line", [
    "/// The resumable protocol (v0 §5.9) over the service.",
    "/// Encoding follows §4.1 exactly.",
    "// rules.md §2.6 (b): a list of P",
    "See ../shared/DESIGN.md for the flow.",
    "as the DESIGN says",
    "(stack-notes: libjwt)",
    "checked against shared/protocol/v0.md",
    "Doc comments are `///` (conventions §9).",
    "the granularity (v0.md §5.9 [REC])",
    "(docs/configuration.md, §11)",
    "# §5.6 list",
    "Crash safety of the embedded backend (issue 3 item 5)",
    "# Issue 19 item 5 — every request",
])
def test_outside_citations_are_found(line: str) -> None:
    assert lint_text(line), line


@pytest.mark.parametrize("line", [
    "/// validators (RFC 9110 §13).",
    "/// Asymmetric JWS signature algorithms (RFC 7518 §3.3, §3.4), all over SHA-2.",
    "/// RFC 3986 §3.2.2–3.2.3).",
    "/// CR LF append one LF (XML 1.0 §2.11).",
    "/// what the CloudEvents HTTP binding (§3.1.3.2) requires",
    "(RFC 9112 §3.2, RFC 3986 §3.2.2; no comma)",
    "Design notes live in docs/architecture.md; conventions of the code in docs/style.md.",
    "listing wildcards: firebase-tools#3533 is a public issue",
])
def test_standards_and_own_documents_pass(line: str) -> None:
    assert not lint_text(line), line
