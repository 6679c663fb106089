"""JUnit XML: one test suite per image, one test case per selected rule.

A rule fails its case when it has findings at or above ``fail_on``; findings
below it go to ``system-out``; a rule that needs a target and had none is
``skipped``; an unreadable image has one errored case.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from imagelint.core.check import CheckRun
from imagelint.core.engine import at_or_above
from imagelint.escape import xml_text
from imagelint.report import ReportOptions
from imagelint.rules import RULES


def render(run: CheckRun, options: ReportOptions) -> str:
    root = ET.Element("testsuites", name="imagelint")
    total = failures = errors = skipped_total = 0
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
                    text = "\n".join(
                        f"[{f.severity}]{' [pool ' + f.pool + ']' if f.pool else ''} {f.message}"
                        + (f"\n  at {f.location.describe()}" if f.location else "")
                        for f in failing
                    )
                    ET.SubElement(case, "failure", message=failing[0].message, type=failing[0].severity).text = text
                elif rule_id in r.skipped_rules:
                    skips += 1
                    ET.SubElement(case, "skipped", message="needs a target (--driver/--gpu, --target-file or --cluster)")
                below = [f for f in found if f not in failing]
                supp = [s for s in r.suppressed if s.finding.rule == rule_id]
                if below or supp:
                    out = [f"[{f.severity}] {f.message}" for f in below]
                    out += [f"[suppressed: {s.reason}] {s.finding.message}" for s in supp]
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


def _only_xml_characters(root: ET.Element) -> None:
    """Every name, message and text holds only characters XML 1.0 allows (an image's env value
    or file path may hold a control character; ElementTree would write it raw: ill-formed XML)."""
    for element in root.iter():
        if element.text:
            element.text = xml_text(element.text)
        for key, value in element.attrib.items():
            element.attrib[key] = xml_text(value)
