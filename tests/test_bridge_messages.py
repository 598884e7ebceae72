"""lgembed/bridge/messages.py mirrors firmware-bridge/include/lgb_msg.h (docs/STYLE.md §G).

The header's `#define LGB_MSG_* 0x..`, `LGB_FLAG_*`, `LGB_ERR_*`, `LGB_OK` and
`LGB_VERSION` lines are parsed and compared both ways: every number in the header is in
Python with the same value, and every Python number is in the header.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lgembed.bridge import messages as m

HEADER = Path(__file__).resolve().parents[1] / "firmware-bridge" / "include" / "lgb_msg.h"

_DEFINE = re.compile(r"^\s*#define\s+(LGB_(?:MSG|FLAG|ERR)_[A-Z0-9_]+|LGB_OK|LGB_VERSION)\s+(0x[0-9A-Fa-f]+|\d+)\b", re.M)


def _header() -> dict[str, int]:
    if not HEADER.exists():
        pytest.skip("firmware-bridge/include/lgb_msg.h is missing: this tree has no firmware-bridge/")
    return {name: int(value, 0) for name, value in _DEFINE.findall(HEADER.read_text())}


def _python() -> dict[str, int]:
    out = {f"LGB_MSG_{name}": code for code, name in m.MESSAGE_TYPES.items()}
    out |= {"LGB_FLAG_ACK_REQ": m.FLAG_ACK_REQ, "LGB_FLAG_RETRY": m.FLAG_RETRY, "LGB_VERSION": m.VERSION}
    out |= {name: code for code, (name, _) in m.ERRORS.items()}
    return out


def test_header_numbers_equal_python():
    header = _header()
    assert len(header) >= 9 + 2 + 16 + 1
    assert header == _python()


def test_python_constants_are_consistent():
    assert {getattr(m, f"MSG_{n}") for n in m.MESSAGE_TYPES.values()} == set(m.MESSAGE_TYPES)
    for code, (name, _) in m.ERRORS.items():
        assert getattr(m, name.removeprefix("LGB_")) == code  # LGB_ERR_CRC -> m.ERR_CRC
    assert m.ERROR_CODES["LGB_ERR_ISOTP"] == 15
    assert m.error_name(8) == "LGB_ERR_NO_FUNCTION" and m.error_name(99) == "code 99"
    assert m.RELIABLE_TYPES == {m.MSG_HELLO, m.MSG_CALL, m.MSG_RESULT, m.MSG_EVENT}
    assert set(m.__all__) <= set(dir(m))
