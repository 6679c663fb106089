"""JUnit XML: one test suite per image, one test case per selected rule.

A rule fails its case when it has findings at or above ``fail_on`` (each with its detail lines,
bounded, and its fix; the case's ``file``/``line`` is where the first one is shown, an image's
findings on the Dockerfile that built it when known); findings below it go to ``system-out``; a rule that needs a target and had none is
``skipped``; an unreadable image has one errored case.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from imagelint.core.check import CheckRun
from imagelint.core.engine import at_or_above
from imagelint.escape import xml_text
from imagelint.report import ReportOptions
from imagelint.report.artifacts import REPOSITORY_KINDS
from imagelint.report.fragments import ANNOTATION_DETAIL_LINES, finding_lines
from imagelint.report.github import image_file
from imagelint.rules import RULES
from imagelint.rules.base import Finding


def render(run: CheckRun, options: ReportOptions) -> str:
    root = ET.Element("testsuites", name="imagelint")
    total = failures = errors = skipped_total = 0
    cache: dict[str, list[str] | None] = {}
    for r in run.results:
        suite = ET.SubElement(root, "testsuite", name=r.subject + (f" [{r.platform}]" if r.platform else ""))
        tests = fails = errs = skips = 0
        if r.error:
            case = ET.SubElement(suite, "testcase", classname=r.subject, name="read image")
            ET.SubElement(case, "error", message=r.error, type="unreadable").text = r.error
            tests, errs = 1, 1
        else:
            for rule_id in r.rules_run:
                rule = RULES[rule_id]
                tests += 1
                case = ET.SubElement(suite, "testcase", classname=r.subject, name=f"{rule.id} {rule.name}")
                found = [f for f in r.findings if f.rule == rule_id]
                failing = [f for f in found if at_or_above(f.severity, run.config.fail_on)]
                if failing:
                    fails += 1
                    blocks = []
                    for f in failing:
                        head, details = finding_lines(f)
                        anchored = image_file(r, f, options.sarif_artifacts, cache)
                        blocks.append("\n".join([
                            f"[{f.severity}]{' [pool ' + f.pool + ']' if f.pool else ''} {head}",
                            *_bounded(details),
                            *([f"  at {f.location.describe()}"] if f.location else []),
                            *([f"  shown at {anchored[0]}:{anchored[1]} (the Dockerfile that built the image)"] if anchored else []),
                            *([f"  fix: {f.remediation}"] if f.remediation else []),
                        ]))
                        if anchored and "file" not in case.attrib:
                            case.set("file", anchored[0])
                            case.set("line", str(anchored[1]))
                        elif f.location is not None and f.location.kind in REPOSITORY_KINDS and f.location.source \
                                and "file" not in case.attrib:
                            case.set("file", f.location.source)
                            if f.location.line:
                                case.set("line", str(int(f.location.line)))
                    # The message attribute is what CI summaries show in one line: the headline.
                    ET.SubElement(case, "failure", message=finding_lines(failing[0])[0],
                                  type=failing[0].severity).text = "\n".join(blocks)
                elif rule_id in r.skipped_rules:
                    skips += 1
                    ET.SubElement(case, "skipped", message="needs a target (--driver/--gpu, --target-file or --cluster)")
                below = [f for f in found if f not in failing]
                supp = [s for s in r.suppressed if s.finding.rule == rule_id]
                if below or supp:
                    out = [line for f in below for line in _lines(f"[{f.severity}] ", f)]
                    out += [line for s in supp for line in _lines(f"[suppressed: {s.reason}] ", s.finding)]
                    ET.SubElement(case, "system-out").text = "\n".join(out)
        suite.set("tests", str(tests))
        suite.set("failures", str(fails))
        suite.set("errors", str(errs))
        suite.set("skipped", str(skips))
        total, failures, errors, skipped_total = total + tests, failures + fails, errors + errs, skipped_total + skips
    root.set("tests", str(total))
    root.set("failures", str(failures))
    root.set("errors", str(errors))
    root.set("skipped", str(skipped_total))
    _only_xml_characters(root)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _lines(prefix: str, f: Finding) -> list[str]:
    head, details = finding_lines(f)
    return [prefix + head, *_bounded(details), *([f"  fix: {f.remediation}"] if f.remediation else [])]


def _bounded(details: tuple[str, ...]) -> list[str]:
    """The detail lines, at most ``ANNOTATION_DETAIL_LINES``; the rest counted (CI keeps the fix)."""
    shown = [f"  {d}" for d in details[:ANNOTATION_DETAIL_LINES]]
    if len(details) > ANNOTATION_DETAIL_LINES:
        shown.append(f"  … {len(details) - ANNOTATION_DETAIL_LINES} more detail line(s): "
                     "imagelint --format text or json shows every line")
    return shown


def _only_xml_characters(root: ET.Element) -> None:
    """Every name, message and text holds only characters XML 1.0 allows (an image's env value
    or file path may hold a control character; ElementTree would write it raw: ill-formed XML)."""
    for element in root.iter():
        if element.text:
            element.text = xml_text(element.text)
        for key, value in element.attrib.items():
            element.attrib[key] = xml_text(value)
