"""Ferry in the person's own language: the template is current, every language is complete and
checked by msgfmt, the installed catalogues and desktop files carry the translations, and the
command line and the service speak the session's language."""

from __future__ import annotations

import gettext
import re
import subprocess
from pathlib import Path

import pytest

from ferryenv import write_png

REPO = Path(__file__).resolve().parents[3]
PO = REPO / "po"
LANGUAGES = [line.strip() for line in (PO / "LINGUAS").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
# A call of tr/trn/trc/trNoop with a literal, outside comments: what xgettext extracts.
TRANSLATABLE_CALL = re.compile(r'\b(?:tr|trn|trc|trNoop)\(\s*"')
APP = "io.github.ferryshare.Ferry"


def normalized(path: Path) -> str:
    """A catalogue as a sorted list of entries without locations or the creation date."""
    done = subprocess.run(["msgcat", "--no-location", "--no-wrap", "--sort-output", str(path)],
                          capture_output=True, text=True, check=True)
    return "\n".join(line for line in done.stdout.splitlines() if "POT-Creation-Date" not in line)


def msgids(path: Path) -> set[str]:
    done = subprocess.run(["msgcat", "--no-location", "--no-wrap", str(path)], capture_output=True, text=True,
                          check=True)
    return {line for line in done.stdout.splitlines() if line.startswith(("msgid ", "msgctxt ", "msgid_plural "))}


def catalogue(prefix: Path, language: str) -> gettext.GNUTranslations:
    return gettext.translation("ferry", localedir=str(prefix / "share" / "locale"), languages=[language])


def test_the_template_holds_every_translatable_string(tmp_path):
    # Given the template extracted afresh from every file in po/POTFILES
    fresh = tmp_path / "ferry.pot"
    subprocess.run([str(REPO / "scripts" / "update-pot.sh"), "--pot", str(fresh)], check=True, cwd=REPO)
    # Then the committed po/ferry.pot is the same (`make pot` refreshes it)
    missing = sorted(msgids(fresh) - msgids(PO / "ferry.pot"))
    assert not missing, "strings missing from po/ferry.pot (run `make pot`):\n" + "\n".join(missing[:40])
    assert normalized(fresh) == normalized(PO / "ferry.pot"), "po/ferry.pot is out of date: run `make pot`"


def test_potfiles_names_every_file_with_translatable_strings():
    listed = {line.strip() for line in (PO / "POTFILES").read_text().splitlines()
              if line.strip() and not line.startswith("#")}
    for name in listed:
        assert (REPO / name).is_file(), f"po/POTFILES names {name}, which does not exist"
    with_strings = set()
    for source in (REPO / "Sources").rglob("*.swift"):
        code = [line for line in source.read_text().splitlines() if not line.lstrip().startswith("//")]
        if any(TRANSLATABLE_CALL.search(line) for line in code):
            with_strings.add(str(source.relative_to(REPO)))
    assert not with_strings - listed, f"not in po/POTFILES: {sorted(with_strings - listed)}"
    assert len(with_strings) > 20, "hardly any translatable strings found: is the pattern still right?"


@pytest.mark.parametrize("language", LANGUAGES)
def test_each_language_is_complete_and_checked(language):
    po = PO / f"{language}.po"
    # msgfmt --check: the header, plural forms, and the placeholders ({name}) of each translation
    done = subprocess.run(["msgfmt", "--check", "--statistics", "-o", "/dev/null", str(po)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    statistics = done.stderr.strip()
    assert re.fullmatch(r"\d+ translated messages?\.", statistics), f"{language}: {statistics}"
    # and it translates exactly the template's strings: nothing missing, nothing left over
    assert msgids(po) == msgids(PO / "ferry.pot"), f"{language}.po is not merged with ferry.pot: run `make pot`"
    assert "#~ " not in po.read_text(), f"{language}.po keeps obsolete entries (#~): remove them"


@pytest.mark.parametrize("language", LANGUAGES)
def test_installed_catalogues_and_desktop_files_are_translated(prefix, language):
    # The compiled catalogue is where the programs look for it
    translations = catalogue(prefix, language)
    assert translations.gettext("Share files, text and links into your chats") != \
        "Share files, text and links into your chats"
    # The "Open With" entry reads in the language, and stays valid
    desktop = (prefix / "share" / "applications" / f"{APP}.desktop").read_text()
    for key in ("Name", "GenericName", "Comment", "Keywords"):
        assert re.search(rf"^{key}\[{language}\]=.+$", desktop, re.M), f"no {key}[{language}] in the desktop entry"
    assert f"GenericName[{language}]={translations.gettext('Share to Chat')}" in desktop
    validate = subprocess.run(["desktop-file-validate", str(prefix / "share" / "applications" / f"{APP}.desktop")],
                              capture_output=True, text=True)
    assert validate.returncode == 0 and not validate.stdout.strip(), validate.stdout + validate.stderr
    # And the AppStream entry
    metainfo = prefix / "share" / "metainfo" / f"{APP}.metainfo.xml"
    assert f'xml:lang="{language}"' in metainfo.read_text()
    validate = subprocess.run(["appstreamcli", "validate", "--no-net", str(metainfo)], capture_output=True, text=True)
    assert validate.returncode == 0, validate.stdout + validate.stderr


def french_session(new_session):
    return new_session(LANG="fr_FR.UTF-8", LC_ALL="fr_FR.UTF-8", LANGUAGE="fr")


def test_a_command_line_error_in_french(new_session, prefix, tmp_path):
    # Given a session in French
    session = french_session(new_session)
    french = catalogue(prefix, "fr")
    missing = tmp_path / "absent.png"
    # When a file that does not exist is shared from the command line
    done = session.ferry("send", str(missing))
    # Then the service's refusal reaches the person in French, naming the file
    sentence = french.gettext("{path} does not exist.")
    assert sentence != "{path} does not exist.", "the French catalogue lacks the sentence"
    # the file's name in French quotation marks, as the catalogue writes them
    quoted = french.pgettext("quotation marks", "\u201c{text}\u201d").format(text=missing)
    assert quoted.startswith("\u00ab"), quoted
    assert sentence.format(path=quoted) in done.stderr, done.stderr
    assert done.returncode == 66


def test_sizes_and_dates_follow_the_locale(new_session, tmp_path):
    # Given a German session and a file of a million and a half bytes
    session = new_session(LANG="de_DE.UTF-8", LC_ALL="de_DE.UTF-8", LANGUAGE="de")
    report = tmp_path / "Bericht.pdf"
    report.write_bytes(b"%PDF-1.4\n" + bytes(1_500_000 - 9))
    done = session.ferry("send", str(report))
    assert done.returncode == 0, done.stderr
    share_id = done.stdout.strip()
    # When the share is shown
    shown = session.ferry("show", share_id)
    assert shown.returncode == 0, shown.stderr
    # Then its size has a decimal comma and its date is written the German way (26.11.2026)
    assert "1,5\u00a0MB" in shown.stdout or "1,5 MB" in shown.stdout, shown.stdout
    assert re.search(r"\b\d\d\.\d\d\.\d{4}\b", shown.stdout), shown.stdout
    # while the same share in an English session reads 1.5 MB
    english = session.run(str(session.prefix / "bin" / "ferry"), "show", share_id,
                          env={**session.env, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "LANGUAGE": ""})
    assert "1.5\u00a0MB" in english.stdout or "1.5 MB" in english.stdout, english.stdout


def test_the_help_summary_is_in_the_sessions_language(new_session, prefix):
    session = french_session(new_session)
    done = session.ferry("--help")
    assert done.returncode == 0, done.stderr
    summary = catalogue(prefix, "fr").gettext("Share files, text and links into your chats.")
    assert summary != "Share files, text and links into your chats."
    assert summary in done.stdout, done.stdout
