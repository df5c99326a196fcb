"""Manuals in the text formats read by their structure: reStructuredText (a Sphinx source, as .rst or
served as .txt) and a manual page saved from `man` give sections, code, option items and clean
prose, not their markup or layout."""

from agent.assembly.units import passage_units
from agent.documents import rst
from agent.retrieval.corpus import ReadReport, read_passages

SOURCE = """\
.. _usage:

.. program:: packit

====================
The packit manual
====================

Packit packs files (:pep:`8` names). See :ref:`the install guide <install>` and `the home page <https://example.org>`_.

.. toctree::

   install
   faq

Packing
=======

To pack a folder, run::

    $ packit pack src/

The ``--level`` option and :option:`packit --fast` trade speed for size; **never** use *both*.

.. option:: -k, --keep

    Keep the input files after packing.

    A kept file is never touched again.

.. option:: --level N

    Set the compression level from 1 to 9.

.. confval:: threads

    :type: integer
    :default: 1

   How many cores to use.

.. note::

   Packing a packed file gains nothing.

.. code-block:: bash
   :caption: from a script

   packit pack --level 9 big/

Unpacking
---------

- ``packit unpack FILE`` unpacks one file,
  keeping its name.
- ``packit list FILE`` lists what a file holds.

PACKIT_HOME
    Where packit keeps its cache.

=========  ============
Setting    Meaning
=========  ============
level      How hard to pack.
threads    How many cores to use.
=========  ============
"""


def _blocks(structure):
    return [(section.name, block.kind, block.text) for section in structure.sections for block in section.blocks]


def test_headings_make_the_title_and_the_section_path():
    structure = rst.parse(SOURCE, "fallback")
    assert structure.title == "The packit manual"
    assert [section.name for section in structure.sections] == ["", "Packing", "Packing > Unpacking"]


def test_a_literal_block_follows_its_lead_in_and_markup_is_reduced_to_its_words():
    blocks = _blocks(rst.parse(SOURCE, "fallback"))
    texts = [text for _, kind, text in blocks if kind == "text"]
    assert "Packit packs files (PEP 8 names). See the install guide and the home page." in texts
    assert "To pack a folder, run:" in texts
    assert ("Packing", "code", "$ packit pack src/") in blocks
    spaced = rst.parse("Unpack it: ::\n\n    packit unpack big.pk\n", "t")
    assert [block.text for section in spaced.sections for block in section.blocks] == ["Unpack it:", "packit unpack big.pk"]
    assert "The --level option and packit --fast trade speed for size; never use both." in texts
    assert not any("install\nfaq" in text or text.startswith("..") for _, _, text in blocks)  # toctree, targets


def test_an_option_directive_is_one_item_of_its_name_and_description():
    blocks = _blocks(rst.parse(SOURCE, "fallback"))
    assert ("Packing", "list", "-k, --keep — Keep the input files after packing.") in blocks
    assert ("Packing", "text", "A kept file is never touched again.") in blocks
    assert ("Packing", "list", "--level N — Set the compression level from 1 to 9.") in blocks
    assert ("Packing", "list", "threads — How many cores to use.") in blocks  # its :type: is the directive's
    assert ("Packing", "text", "Packing a packed file gains nothing.") in blocks  # the note's prose
    assert ("Packing", "code", "packit pack --level 9 big/") in blocks  # its :caption: is no code


def test_lists_definitions_and_simple_tables_keep_their_items():
    blocks = _blocks(rst.parse(SOURCE, "fallback"))
    assert ("Packing > Unpacking", "list",
            "packit unpack FILE unpacks one file, keeping its name.\npackit list FILE lists what a file holds.") in blocks
    assert ("Packing > Unpacking", "list", "PACKIT_HOME — Where packit keeps its cache.") in blocks
    assert ("Packing > Unpacking", "table",
            "Setting | Meaning\nlevel | How hard to pack.\nthreads | How many cores to use.") in blocks


def test_a_sphinx_source_served_as_txt_is_read_by_structure_and_plain_text_is_not(tmp_path):
    (tmp_path / "packit").mkdir()
    (tmp_path / "packit" / "usage.rst.txt").write_text(SOURCE)
    (tmp_path / "packit" / "notes.txt").write_text("Plain notes: nothing here is markup. It is a note::\nreally.\n")
    passages = list(read_passages([str(tmp_path)], ReadReport()))
    by_file = {p["document"]: [] for p in passages}
    for passage in passages:
        by_file[passage["document"]].append(passage)
    usage = by_file["packit/usage.rst.txt"]
    assert {p["metadata"].get("section") for p in usage} >= {"Packing", "Packing > Unpacking"}
    assert all(p["title"].startswith("The packit manual") for p in usage)
    units = [text for p in usage for _, text in passage_units(p)]
    assert "`-k, --keep` — Keep the input files after packing." in units  # an answer unit, shown as code
    assert any(unit.startswith("To pack a folder, run:\n```\n$ packit pack src/") for unit in units)
    assert not any("``" in p["text"] or ":option:" in p["text"] for p in usage)
    notes = by_file["packit/notes.txt"]
    assert [p["title"] for p in notes] == ["notes"] and "kind" not in notes[0]["metadata"]


def test_list_csv_and_grid_tables_give_one_row_unit_each():
    source = (".. list-table:: Options\n   :header-rows: 1\n\n   * - Option\n     - Meaning\n"
              "   * - ``--fast``\n     - Pack quickly,\n       trading size for speed.\n   * - ``--keep``\n     - Keep inputs.\n\n"
              ".. csv-table::\n   :header: \"Setting\", \"Default\", \"Meaning\"\n\n"
              "   level, 6, \"How hard to pack, 1 to 9\"\n   threads, 1, How many cores to use\n")
    tables = [block.text for section in rst.parse(source, "t").sections for block in section.blocks if block.kind == "table"]
    assert tables == ["Option | Meaning\n--fast | Pack quickly, trading size for speed.\n--keep | Keep inputs.",
                      "Setting | Default | Meaning\nlevel | 6 | How hard to pack, 1 to 9\nthreads | 1 | How many cores to use"]
    units = [text for table in tables for _, text in passage_units({"id": "t", "title": "T", "kind": "table", "text": table})]
    assert "`--fast` — Pack quickly, trading size for speed." in units
    assert "`level` — How hard to pack, 1 to 9; Default: 6." in units  # what it does, then its value
    grid = rst.parse("+------------+--------------+\n| Option     | Meaning      |\n+============+==============+\n"
                     "| ``--fast`` | Pack quickly |\n|            | and loosely. |\n+------------+--------------+\n", "t")
    assert [block.text for section in grid.sections for block in section.blocks] == [
        "Option | Meaning\n--fast | Pack quickly and loosely."]
    spanning = rst.parse(  # docutils' own example: cells spanning columns and rows
        "+------------------------+------------+----------+----------+\n"
        "| Header row, column 1   | Header 2   | Header 3 | Header 4 |\n"
        "| (header rows optional) |            |          |          |\n"
        "+========================+============+==========+==========+\n"
        "| body row 1, column 1   | column 2   | column 3 | column 4 |\n"
        "+------------------------+------------+----------+----------+\n"
        "| body row 2             | Cells may span columns.          |\n"
        "+------------------------+------------+---------------------+\n"
        "| body row 3             | Cells may  | - Table cells       |\n"
        "+------------------------+ span rows. | - contain           |\n"
        "| body row 4             |            | - body elements.    |\n"
        "+------------------------+------------+---------------------+\n", "t")
    assert [block.text for section in spanning.sections for block in section.blocks] == [
        "Header row, column 1 (header rows optional) | Header 2 | Header 3 | Header 4\n"
        "body row 1, column 1 | column 2 | column 3 | column 4\n"
        "body row 2 | Cells may span columns.\n"
        "body row 3 | Cells may span rows. | - Table cells - contain - body elements.\n"
        "body row 4"]  # a rule under some columns ends their cells only; no rule is read as text
    headless = rst.parse(".. list-table::\n\n   * - ``--quiet``\n     - Print nothing.\n", "t")
    [table] = [block.text for section in headless.sections for block in section.blocks]
    assert [text for _, text in passage_units({"id": "t", "title": "T", "kind": "table", "text": table})] == [
        "`--quiet` — Print nothing."]  # no header row: the first row is a row


def test_a_csv_table_reads_its_file_beside_the_document_and_nothing_outside_its_folder(tmp_path):
    docs = tmp_path / "packit" / "docs"
    (docs / "tables").mkdir(parents=True)
    (docs / "tables" / "options.csv").write_text("--fast, Pack quickly\n--keep, Keep inputs\n")
    (tmp_path / "secret.csv").write_text("token, s3cr3t\n")
    (docs / "usage.rst").write_text(
        "Usage\n=====\n\n.. csv-table:: Options\n   :header: \"Option\", \"Meaning\"\n   :file: tables/options.csv\n\n"
        ".. csv-table:: Elsewhere\n   :file: ../../secret.csv\n\n.. csv-table:: Missing\n   :file: tables/none.csv\n")
    tables = [block.text for section in rst.read(docs / "usage.rst").sections for block in section.blocks
              if block.kind == "table"]
    assert tables == ["Option | Meaning\n--fast | Pack quickly\n--keep | Keep inputs"]  # the other two give no rows
    assert not any("s3cr3t" in text for text in tables)


def test_the_fields_a_document_opens_with_are_about_it_not_in_it():
    structure = rst.parse(":title: Packit settings\n:category: tools\n\nPackit reads its settings from packit.toml.\n\n"
                          "level\n-----\n\nHow hard to pack.\n\nthreads\n-------\n\nHow many cores to use.\n", "fallback")
    assert structure.title == "Packit settings"
    assert [block.text for section in structure.sections for block in section.blocks][0] == \
        "Packit reads its settings from packit.toml."


def test_a_rst_file_is_ingested_and_a_broken_one_still_gives_its_text(tmp_path):
    (tmp_path / "guide.rst").write_text("Guide\n=====\n\n.. option:: --dry-run\n\nText after an empty option.\n\n"
                                        "   Odd indent::\n\nno literal block follows\n")
    report = ReadReport()
    passages = list(read_passages([str(tmp_path / "guide.rst")], report))
    assert not report.problems
    text = " ".join(p["text"] for p in passages)
    assert "--dry-run" in text and "Text after an empty option." in text and "no literal block follows" in text


MANPAGE = """\
PACKIT(1)                   General Commands Manual                  PACKIT(1)



NAME
       packit - pack files

DESCRIPTION
       The  packit  command  packs  the  named  files.  Whenever possible, each
       file is replaced by a packed one, unless --keep is speci‐
       fied.

OPTIONS
   Operation Mode
       -k --keep
              Keep (don't delete) input files during packing or  unpack-
              ing.

       -d --decompress --uncompress
              Unpack.

       -t --test
              Test. Check the packed file integrity then quit.

       KiB    Multiply the integer by 1,024.  Ki and K are
              accepted as synonyms for KiB.

       ○   When unpacking, the .pk suffix is removed.

EXAMPLES
       To count the bytes a packed file holds, you can use:

              packit -cd file.pk | wc -c

packit 1.0                          2026-01-01                       PACKIT(1)
"""


def test_a_manual_page_saved_as_text_is_read_by_its_layout(tmp_path):
    (tmp_path / "packit").mkdir()
    (tmp_path / "packit" / "packit.1.txt").write_text(MANPAGE)
    passages = list(read_passages([str(tmp_path)], ReadReport()))
    sections = {p["metadata"].get("section") for p in passages}
    assert {"OPTIONS > Operation Mode", "DESCRIPTION", "EXAMPLES"} <= sections
    assert all(p["title"].startswith("packit.1") for p in passages)
    text = "\n".join(p["text"] for p in passages)
    assert "PACKIT(1)" not in text and "General Commands Manual" not in text  # the running header and footer
    assert "The packit command packs the named files." in text  # justified spacing undone
    assert "unless --keep is specified." in text  # a word man hyphenated at a line's end whole
    units = [unit for p in passages for _, unit in passage_units(p)]
    assert "`-k --keep` — Keep (don't delete) input files during packing or unpacking." in units
    assert "`-d --decompress --uncompress` — Unpack." in units
    assert "`-t --test` — Test: Check the packed file integrity then quit." in units  # the label joins its sentence
    assert "KiB — Multiply the integer by 1,024." in units or "`KiB` — Multiply the integer by 1,024." in units
    assert "When unpacking, the .pk suffix is removed." in units
    assert "To count the bytes a packed file holds, you can use:\n```\npackit -cd file.pk | wc -c\n```" in units


ROFF = r""".\" a page as Debian installs it: roff source, gzipped
.TH PACKIT 1 "2026-01-01" "packit 2.0" "User Commands"
.SH NAME
packit \- pack files …
.SH SYNOPSIS
.B packit
[\fIoptions\fR] \fIfile\fR...
.SH DESCRIPTION
\fBpackit\fR packs the named files into one archive, keeping their names and modes.
.SH OPTIONS
.TP
.BR \-k ", " \-\-keep
Keep (don't delete) input files after packing.
.TP
\fB\-\-level\fR=\fIN\fR
Set the compression level from 1 to 9.
.IP
Higher levels make smaller archives and take longer.
.TP
.BR \-t ", " \-\-type " \fIkind\fR"
Pack only files of one kind:
.RS
.TP
.B f, file
regular files
.TP
.B l, symlink
symbolic links
.RE
.IP
Give it more than once for several kinds.
.IP "\fB\-c\fR" 4
.PD 0
.IP "\fB\-\-continue\fR" 4
.PD
Continue packing a partially packed file.
.PP
Options may be given in any order on the command line.
.SH COLUMNS
.TP 5
.B AGRP
The autogroup of the packed file, read from the archive's index when one is present.
.TP
.B PERCENT_SPACE_SAVED (SAVED%)
The share of the input's size the packing saved.
.SH "SEE ALSO"
gzip(1)
"""


def _gzipped(path, text):
    import gzip

    path.write_bytes(gzip.compress(text.encode("utf-8")))
    return path


def test_a_manual_pages_roff_source_is_typeset_and_read_by_its_layout(tmp_path):
    man1 = tmp_path / "man" / "man1"
    man1.mkdir(parents=True)
    _gzipped(man1 / "packit.1.gz", ROFF)
    (man1 / "unpackit.1").write_text(".so man1/packit.1\n")  # a page that only points to another
    (man1 / "notes-2.1").write_text("Not a manual page, though its name ends like one.\n")
    report = ReadReport()
    passages = list(read_passages([str(tmp_path / "man")], report))
    assert {p["document"] for p in passages} == {"man1/packit.1.gz"}
    assert {"DESCRIPTION", "OPTIONS"} <= {p["metadata"].get("section") for p in passages}
    units = [unit for p in passages for _, unit in passage_units(p)]
    assert "`-k, --keep` — Keep (don't delete) input files after packing." in units
    assert "`--level=N` — Set the compression level from 1 to 9." in units
    assert "`-c --continue` — Continue packing a partially packed file." in units  # spellings on lines of their own
    # a further paragraph of an option's description is said of that option; the section's prose is not
    assert "`--level=N` — … Higher levels make smaller archives and take longer." in units
    assert "Options may be given in any order on the command line." in units
    # the values an option's description lists are said of that option, and so is what follows them
    assert "`-t, --type kind` — … l, symlink: symbolic links." in units
    assert "`-t, --type kind` — … Give it more than once for several kinds." in units
    assert not any(unit.startswith(("`l, symlink`", "l, symlink")) for unit in units)
    # a short tag one space before its description, and a long name over its own
    assert "`AGRP` — The autogroup of the packed file, read from the archive's index when one is present." in units
    assert "`PERCENT_SPACE_SAVED (SAVED%)` — The share of the input's size the packing saved." in units
    text = "\n".join(p["text"] for p in passages)
    assert "\\f" not in text and ".TP" not in text and "PACKIT(1)" not in text
    assert "packit - pack files …" in text  # the source's UTF-8 as it is, not read as Latin-1
    assert any("only points to another page (man1/packit.1)" in problem for problem in report.problems)
    assert any("notes-2.1: not a manual page's source" in problem for problem in report.problems)


PANDOC_ROFF = r""".\" a page as pandoc and argparse-manpage set it: titled sections, a blank line after each tag
.TH FETCHIT 1 "2026-01-01" "fetchit 1.0" "User Commands"
.SH NAME
fetchit \- fetch a URL
.SH Positional arguments
.IP "\fB\,URL\/\fR"


The address to fetch.
.SH Network
.IP "\fB\,--follow\/\fR, \fB\,-F\/\fR"


Follow redirects.


.IP "\fB\,--timeout\/\fR \fI\,SECONDS\/\fR"


Give up after SECONDS.
.SH EXAMPLES
Then
.IP
fetchit -F example.org
.PP
follows every redirect.
"""


RONN_ROFF = r""".\" options as bullets, each description a paragraph of its own under the option
.TH SIFT 1 "2026-01-01" "sift 1.0" "User Commands"
.SH NAME
sift \- filter records
.SH INVOKING SIFT
.IP "\(bu" 4
\fB\-\-raw\-output\fR / \fB\-r\fR:
.IP
With this option, a string result is written as it is, not as a quoted string.
.IP "\(bu" 4
\fB\-\-unbuffered\fR
.IP
Flush the output after each record.
.IP "\(bu" 4
Records are read one per line.
"""


def test_a_pandoc_style_manual_pages_titled_sections_and_tags_over_a_blank_line_are_read(tmp_path):
    (tmp_path / "fetchit.1").write_text(PANDOC_ROFF)
    passages = list(read_passages([str(tmp_path)], ReadReport()))
    assert {"Positional arguments", "Network", "EXAMPLES"} <= {p["metadata"].get("section") for p in passages}
    units = [unit for p in passages for _, unit in passage_units(p)]
    assert "`--follow, -F` — Follow redirects." in units
    assert "`--timeout SECONDS` — Give up after SECONDS." in units
    assert "`URL` — The address to fetch." in units
    examples = next(p["text"] for p in passages if p["metadata"].get("section") == "EXAMPLES")
    assert "Then —" not in examples and "fetchit -F example.org" in examples  # a word of prose is no tag
    (tmp_path / "fetchit.1").unlink()
    (tmp_path / "sift.1").write_text(RONN_ROFF)
    units = [unit for p in read_passages([str(tmp_path)], ReadReport()) for _, unit in passage_units(p)]
    assert "`--raw-output / -r` — With this option, a string result is written as it is, not as a quoted string." in units
    assert "`--unbuffered` — Flush the output after each record." in units
    assert "Records are read one per line." in units  # a bullet of prose stays one


MDOC_ROFF = r""".\" a BSD mdoc page: each command tagged by its synopsis, wrapped mid-bracket
.Dd January 1, 2026
.Dt PANEL 1
.Os
.Sh NAME
.Nm panel
.Nd split a terminal into panes
.Sh COMMANDS
.Bl -tag -width Ds
.It Xo Ic split-pane
.Op Fl bdhv
.Op Fl c Ar start-directory
.Op Fl e Ar environment
.Op Fl l Ar size
.Op Fl t Ar target-pane
.Op Ar shell-command
.Xc
.D1 Pq alias: Ic splitp
Create a new pane by splitting target-pane.
.Pp
If -h is given, the split is horizontal.
.It Xo Ic kill-pane
.Op Fl a
.Op Fl t Ar target-pane
.Xc
Destroy the given pane.
.El
.Sh SYNOPSIS NOTES
.Nm
.Op Fl 2Cv
.Op Fl c Ar shell-command
.Op Fl f Ar file
.Op Fl L Ar socket-name
.Op Fl S Ar socket-path
.Op Ar command Op Ar flags
"""


def test_an_mdoc_pages_commands_are_items_tagged_by_their_synopsis(tmp_path):
    (tmp_path / "panel.1").write_text(MDOC_ROFF)
    units = [unit for p in read_passages([str(tmp_path)], ReadReport()) for _, unit in passage_units(p)]
    tag = "`split-pane [-bdhv] [-c start-directory] [-e environment] [-l size] [-t target-pane] [shell-command] (alias: splitp)`"
    assert f"{tag} — Create a new pane by splitting target-pane." in units
    assert f"{tag} — … If -h is given, the split is horizontal." in units
    assert "`kill-pane [-a] [-t target-pane]` — Destroy the given pane." in units
    assert any(unit.startswith("panel [-2Cv]") for unit in units)  # a synopsis with nothing under it is no item
    assert not any("January 1, 2026" in unit for unit in units)  # the page's footer


def test_a_manual_page_is_its_product_not_its_man_section_folder(tmp_path):
    from agent.retrieval.products import product_folder, product_of

    assert product_folder("man1/packit.1.gz") == "" and product_folder("share/man/man8/packitd.8") == ""
    assert product_folder("packit/man1/packit.1.gz") == "packit"
    man1 = tmp_path / "man1"
    man1.mkdir()
    _gzipped(man1 / "packit.1.gz", ROFF)
    passages = [{**p, **p["metadata"]} for p in read_passages([str(tmp_path)], ReadReport())]  # as the index returns them
    assert {product_of(p) for p in passages} == {"packit"}


def test_without_groff_a_manual_page_is_skipped_with_how_to_get_it(tmp_path, monkeypatch):
    from agent.documents import roff

    monkeypatch.setattr(roff.shutil, "which", lambda name: None)
    _gzipped(tmp_path / "packit.1.gz", ROFF)
    report = ReadReport()
    assert list(read_passages([str(tmp_path / "packit.1.gz")], report)) == []
    assert report.problems and "groff" in report.problems[0] and "apt-get install groff-base" in report.problems[0]


def test_a_broken_gzip_manual_page_is_one_line_in_the_report(tmp_path):
    (tmp_path / "packit.1.gz").write_bytes(b"\x1f\x8b\x08\x00 not really gzip")
    report = ReadReport()
    assert list(read_passages([str(tmp_path)], report)) == []
    assert report.problems and "packit.1.gz: not a readable gzip file" in report.problems[0]


def test_a_link_to_a_page_read_under_its_own_name_is_not_read_twice(tmp_path):
    man1, elsewhere = tmp_path / "man1", tmp_path / "elsewhere"
    man1.mkdir()
    elsewhere.mkdir()
    _gzipped(man1 / "packit.1.gz", ROFF)
    (man1 / "unpackit.1.gz").symlink_to("packit.1.gz")  # the page's other name, as Debian links it
    _gzipped(elsewhere / "repackit.1.gz", ROFF.replace("PACKIT", "REPACKIT"))
    (man1 / "repackit.1.gz").symlink_to(elsewhere / "repackit.1.gz")  # outside the folder read: read through the link
    report = ReadReport()
    documents = {p["document"] for p in read_passages([str(man1)], report)}
    assert documents == {"packit.1.gz", "repackit.1.gz"}
    assert report.links == 1 and not report.problems


def test_a_gzipped_document_is_read_by_its_own_format_and_named_as_the_file(tmp_path):
    """Debian installs a package's longer docs gzipped (/usr/share/doc/zstd/README.md.gz)."""
    doc = tmp_path / "doc" / "packit"
    doc.mkdir(parents=True)
    _gzipped(doc / "README.md.gz", "# Packit\n\n## Install\n\nTo install packit, run:\n\n```\npip install packit\n```\n")
    _gzipped(doc / "NOTES.txt.gz", "Packit keeps its cache in ~/.packit. It never deletes it.\n")
    _gzipped(doc / "old.tar.gz", "not a document")  # an archive: counted, not read
    (doc / "broken.md.gz").write_bytes(b"\x1f\x8b\x08\x00 not really gzip")
    report = ReadReport()
    passages = list(read_passages([str(tmp_path / "doc")], report))
    assert {p["document"] for p in passages} == {"packit/README.md.gz", "packit/NOTES.txt.gz"}
    readme = [p for p in passages if p["document"] == "packit/README.md.gz"]
    assert readme[0]["metadata"]["section"].endswith("Install") and "pip install packit" in readme[0]["text"]
    assert all(p["source"].startswith(str(doc)) for p in passages)  # where it was read, not the copy
    assert report.ignored_types == {".gz": 1}
    assert len(report.problems) == 1 and report.problems[0].startswith(f"{doc / 'broken.md.gz'}: not a readable gzip file")
    assert report.problem_files == {str((doc / "broken.md.gz").resolve())}
