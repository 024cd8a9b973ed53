"""mlkd/utils/cli.py: how a tool ends (``run_tool``) and what its shared arguments accept."""

import pytest
from conftest import MULTIDIGITS_STUDENT, load_tool

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


@pytest.mark.parametrize('tool', ['analysis_tools/calibrate_thresholds', 'infer'])
def test_a_score_threshold_outside_0_1_is_refused(tool, capsys):
    flag = '--default' if 'calibrate' in tool else '--threshold'
    with pytest.raises(SystemExit) as exit_info:
        load_tool(tool).parse_args([MULTIDIGITS_STUDENT, 'x', '--out', 'y.json', flag, '7'])
    assert exit_info.value.code == 2
    assert '7 is not in [0, 1] (scores are probabilities)' in capsys.readouterr().err


def test_a_missing_base_names_the_config_that_lists_it(tmp_path):
    from mlkd.utils.cli import load_config

    (tmp_path / 'leaf.py').write_text("_base_ = ['./middle.py']\n")
    (tmp_path / 'middle.py').write_text("_base_ = ['../nonexist/base.py']\n")
    with pytest.raises(
        FileNotFoundError,
        match=rf"config {tmp_path / 'middle.py'}: its _base_ '../nonexist/base.py' is not found",
    ):
        load_config(str(tmp_path / 'leaf.py'))
    (tmp_path / 'middle.py').write_text("_base_ = ['mlkd::demo/studnt.py']\n")
    with pytest.raises(FileNotFoundError, match=r"its _base_ 'mlkd::demo/studnt.py' is not found"):
        load_config(str(tmp_path / 'leaf.py'))
