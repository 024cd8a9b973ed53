"""How a tool ends (mlkd/utils/cli.py, ``run_tool``)."""

import pytest

from mlkd.utils.cli import run_tool


def _bad_value() -> None:
    raise ValueError('weights.pth: not a checkpoint')


def _missing_file() -> None:
    raise FileNotFoundError('no such config: a.py')


def _defect() -> None:
    raise KeyError('a defect, not a user error')


@pytest.mark.parametrize(
    ('main', 'message'),
    [(_bad_value, 'weights.pth: not a checkpoint'), (_missing_file, 'no such config: a.py')],
)
def test_a_user_error_ends_the_tool_with_its_name_and_message(main, message) -> None:
    with pytest.raises(SystemExit) as exit_info:
        run_tool(main)
    # sys.exit with a string: exit status 1, the string on stderr, no traceback
    assert exit_info.value.code == f'test_cli: {message}'


def test_any_other_exception_keeps_its_traceback() -> None:
    with pytest.raises(KeyError, match='a defect'):
        run_tool(_defect)


def test_a_finished_tool_returns() -> None:
    calls = []
    run_tool(lambda: calls.append(1))
    assert calls == [1]
