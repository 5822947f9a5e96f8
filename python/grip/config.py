"""grip's pipeline configuration, as grip-host reads it (host-example/config.h): INI files or dicts.

File syntax: ``[section]`` headers, ``key = value`` lines, blank lines, comments from a '#' or ';' that starts a
line or a '#' that follows a blank; surrounding blanks are trimmed. Sections: ``pipeline`` (device, cuda_device,
threads) and one per stage kind: descriptor, index, match, group, verify. In a stage section ``impl`` picks the
implementation, ``plugin`` takes the stage from another plugin (relative to the file's folder), and every other
key goes to the stage, which checks it against its parameter table. ``pipeline.device`` is passed to every stage
that has a ``device`` key and does not set its own.

As a dict: ``{"descriptor": {"impl": "shot", "radius": 0.02}, "pipeline": {"device": "cpu"}}``; values may be
str, bool, int or float.
"""

import difflib
import os

from ._abi import KINDS
from ._errors import ConfigError
from ._plugin import Param

SECTIONS = ("pipeline",) + KINDS

PIPELINE_PARAMS = (
    Param("device", "enum", "auto", None, None, ("auto", "cuda", "cpu"),
          "where every stage runs unless its section sets its own device: auto = CUDA when a device exists"),
    Param("cuda_device", "int", "-1", -1, 1023, None, "CUDA device ordinal the stages use; -1 = the first usable one"),
    Param("threads", "int", "0", 0, 4096, None,
          "CPU threads of the CPU twins; 0 = as many as the OpenMP runtime offers"),
)


def _hint(word, candidates):
    best = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f"; did you mean '{best[0]}'?" if best else ""


def _unknown_section(section):
    return f"unknown section (known: {', '.join(SECTIONS)}){_hint(section, SECTIONS)}"


def _value_text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (int, str)):
        return str(value)
    raise TypeError(f"a parameter value must be str, bool, int or float, not {type(value).__name__}")


def _strip_comment(line):
    stripped = line.lstrip()
    if stripped.startswith(("#", ";")):
        return ""
    for i in range(1, len(line)):
        if line[i] == "#" and line[i - 1].isspace():
            return line[:i]
    return line


def read_config(path):
    """The INI file at `path` as {section: {key: value}} (values as written, trimmed). Raises ConfigError listing
    every problem as "file:line: section.key: message"."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8-sig") as f:
            lines = f.read().split("\n")
    except OSError as e:
        raise ConfigError([f"{path}: cannot open: {e.strerror or e}"]) from None
    out, lines_of, problems = {}, {}, []
    section, known = None, False

    def problem(n, where, msg):
        problems.append(f"{path}:{n}: {where + ': ' if where else ''}{msg}")

    for n, raw in enumerate(lines, 1):
        text = _strip_comment(raw).strip()
        if not text:
            continue
        if text.startswith("["):
            known = False
            close = text.find("]")
            if close < 0:
                problem(n, None, f"missing ']' in section header '{text}'")
                continue
            name, rest = text[1:close].strip(), text[close + 1:].strip()
            if rest:
                problem(n, name, f"unexpected '{rest}' after ']'")
            elif not name:
                problem(n, None, "empty section name '[]'")
            else:
                section, known = name, name in SECTIONS
                if not known:
                    problem(n, name, _unknown_section(name))
            continue
        if "=" not in text:
            problem(n, section, f"missing '=' in '{text}' (expected key = value)")
            continue
        key, value = (t.strip() for t in text.split("=", 1))
        if not key:
            problem(n, section, "missing key before '='")
        elif section is None:
            problem(n, key, "key outside any section (put a [section] line above it)")
        elif known:
            if (section, key) in lines_of:
                problem(n, f"{section}.{key}", f"duplicate key (first set at line {lines_of[section, key]})")
            else:
                lines_of[section, key] = n
                out.setdefault(section, {})[key] = value
    if problems:
        raise ConfigError(problems)
    return out


def _from_dict(config, origin):
    if not isinstance(config, dict):
        raise TypeError(f"{origin} must be a dict {{section: {{key: value}}}}, not {type(config).__name__}")
    out, problems = {}, []
    for section, keys in config.items():
        if section not in SECTIONS:
            problems.append(f"{origin}: {section}: {_unknown_section(section)}")
            continue
        if not isinstance(keys, dict):
            raise TypeError(f"{origin}: section '{section}' must be a dict {{key: value}}, not {type(keys).__name__}")
        out[section] = {str(k).strip(): _value_text(v).strip() for k, v in keys.items()}
    if problems:
        raise ConfigError(problems)
    return out


def _from_assignments(items):
    """["section.key=value", ...], as grip-host's --set."""
    out, problems = {}, []
    for a in items:
        left, eq, value = str(a).partition("=")
        section, dot, key = left.partition(".")
        section, key = section.strip(), key.strip()
        if not eq or not dot or not section or not key:
            problems.append(f"override '{a}': expected section.key=value")
        elif section not in SECTIONS:
            problems.append(f"override '{a}': {section}: {_unknown_section(section)}")
        else:
            out.setdefault(section, {})[key] = value.strip()
    if problems:
        raise ConfigError(problems)
    return out


def load(config=None, overrides=None):
    """(sections, folder): the configuration merged from `config` (an INI path, a dict, or None for the plugin's
    defaults) and `overrides` (a dict, or "section.key=value" strings, which replace what config says), and the
    folder relative `plugin` paths are taken from (the file's; the working folder otherwise)."""
    if config is None:
        sections, folder = {}, os.getcwd()
    elif isinstance(config, (str, os.PathLike)):
        sections, folder = read_config(config), os.path.dirname(os.path.abspath(os.fspath(config)))
    else:
        sections, folder = _from_dict(config, "config"), os.getcwd()
    if overrides:
        extra = _from_dict(overrides, "overrides") if isinstance(overrides, dict) else \
            _from_assignments([overrides] if isinstance(overrides, str) else overrides)
        for section, keys in extra.items():
            sections.setdefault(section, {}).update(keys)
    check_pipeline(sections.get("pipeline", {}))
    return sections, folder


def check_value(p, value):
    """Why `value` is not valid for parameter `p`, or None (the rules of src/common/param_value.c)."""
    v = value.strip()
    if p.type == "bool":
        return None if v.lower() in ("true", "false", "1", "0", "yes", "no", "on", "off") else \
            f"'{value}' is not a bool (true/false, 1/0, yes/no, on/off)"
    if p.type == "enum":
        return None if v in p.choices else f"'{value}' is not one of {'|'.join(p.choices)}"
    if p.type in ("int", "float"):
        try:
            x = int(v) if p.type == "int" else float(v)
        except ValueError:
            return f"'{value}' is not {'an integer' if p.type == 'int' else 'a number'}"
        if not (p.min <= x <= p.max):
            return f"{value} is out of range [{p.min:g}, {p.max:g}]"
    return None


def check_pipeline(keys):
    """Raises ConfigError for an unknown or invalid pipeline key."""
    problems = []
    table = {p.key: p for p in PIPELINE_PARAMS}
    for key, value in keys.items():
        p = table.get(key)
        why = f"unknown key for the pipeline{_hint(key, table)}" if p is None else check_value(p, value)
        if why:
            problems.append(f"pipeline.{key}: {why}")
    if problems:
        raise ConfigError(problems)


def pipeline_settings(sections):
    """(device or None when unset, cuda_device, threads) from a checked pipeline section."""
    keys = sections.get("pipeline", {})
    return keys.get("device"), int(keys.get("cuda_device", "-1")), int(keys.get("threads", "0"))
