"""The output policy itself (mlkd/utils/output_policy.py); every tool is checked in
tests/tools/test_output_policy_tools.py."""

import os

import matplotlib
import pytest

from mlkd.utils.output_policy import (
    OutputExistsError,
    OutputIsInputError,
    check_output,
    check_outputs,
    open_output,
    save_figure,
    write_text,
)

matplotlib.use('Agg')


def test_an_existing_file_needs_overwrite_and_an_input_is_never_written(tmp_path):
    out = tmp_path / 'a.txt'
    write_text(out, 'one')
    with pytest.raises(OutputExistsError, match=rf"output '{out}' exists; pass --overwrite"):
        write_text(out, 'two')
    with pytest.raises(OutputExistsError, match='pass --force'):
        check_output(out, flag='--force')
    write_text(out, 'two', overwrite=True)
    assert out.read_text() == 'two'
    os.link(out, tmp_path / 'same.txt')
    for source in (out, tmp_path / 'same.txt', tmp_path / '.' / 'a.txt'):
        with pytest.raises(OutputIsInputError, match='is one of the inputs'):
            write_text(out, 'three', inputs=[None, source], overwrite=True)
    assert out.read_text() == 'two'
    with pytest.raises(IsADirectoryError, match='is a directory'):
        check_output(tmp_path, overwrite=True)


def test_two_outputs_that_are_one_file_are_refused(tmp_path):
    with pytest.raises(ValueError, match='two outputs are the same file'):
        check_outputs([tmp_path / 'x.csv', None, tmp_path / '.' / 'x.csv'])
    assert check_outputs([tmp_path / 'x.csv', None]) == [str(tmp_path / 'x.csv')]


def test_a_crash_while_writing_keeps_the_old_file(tmp_path):
    out = tmp_path / 'table.md'
    write_text(out, 'old')
    with pytest.raises(RuntimeError, match='disk on fire'):
        with open_output(out, overwrite=True) as file:
            file.write('half of the new')
            raise RuntimeError('disk on fire')
    assert out.read_text() == 'old' and os.listdir(tmp_path) == ['table.md']


def test_figures_are_written_in_the_format_of_their_extension(tmp_path):
    import matplotlib.pyplot as plt

    figure = plt.figure(figsize=(1, 1))
    save_figure(figure, tmp_path / 'f.png', tight_layout=True)
    assert not plt.fignum_exists(figure.number)  # closed once written: pyplot lets it go
    save_figure(figure, tmp_path / 'f.pdf')
    assert (tmp_path / 'f.png').read_bytes()[:4] == b'\x89PNG'
    assert (tmp_path / 'f.pdf').read_bytes()[:4] == b'%PDF'
    with open_output(tmp_path / 'b.bin', 'wb') as file:
        file.write(b'\x00\x01')
    assert (tmp_path / 'b.bin').read_bytes() == b'\x00\x01'
