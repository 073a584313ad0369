"""The reports' HTML pieces: the style, escaping, tables, embedded figures and a page written
whole (used by the sweep report, the lending report and the service's policy page)."""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

CSS = """
:root { color-scheme: light; }
body { font-family: "DejaVu Sans", "Liberation Sans", Arial, Helvetica, sans-serif;
       margin: 0 auto; max-width: 1180px; padding: 0 24px 48px; color: #1d232a;
       line-height: 1.45; font-size: 15px; background: #fff; }
h1 { font-size: 1.7em; margin: 28px 0 4px; }
h2 { font-size: 1.3em; margin-top: 40px; border-bottom: 1px solid #d5dbe1; padding-bottom: 4px; }
h3 { font-size: 1.05em; margin: 22px 0 6px; }
p.meta, figcaption, .note { color: #4a5560; font-size: 0.9em; }
p.status { font-weight: 600; padding: 0.4em 0.6em; border-left: 4px solid #b8860b;
           background: #fdf6e3; }
nav ul { columns: 2; padding-left: 20px; margin: 6px 0; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.86em; margin: 8px 0 4px; }
th, td { border: 1px solid #d5dbe1; padding: 4px 8px; text-align: right; white-space: nowrap; }
th { background: #eef2f5; }
table.wrap td { white-space: normal; }
td.text, th.text { text-align: left; }
tbody tr:nth-child(even) { background: #f7f9fa; }
figure { margin: 14px 0 26px; }
figure img { display: block; max-width: 100%; height: auto; border: 1px solid #e3e7eb; }
code { font-size: 0.95em; background: #f1f3f5; padding: 0 3px; border-radius: 3px; }
"""


def escape(text: object) -> str:
    """``text`` as HTML text (``&``, ``<``, ``>`` and quotes escaped)."""
    return html.escape(str(text))


def html_table(header: list[str], rows: list[list[str]], *,
               text_columns: int | tuple[int, ...] = 1) -> str:
    """An HTML table (cells already escaped); text columns (the first ``text_columns``, or
    those listed) are left-aligned, the others (numbers) right-aligned."""
    left = range(text_columns) if isinstance(text_columns, int) else text_columns

    def cells(tag: str, row: list[str]) -> str:
        return "".join(f'<{tag}{" class=text" if i in left else ""}>{c}</{tag}>'
                       for i, c in enumerate(row))
    body = "\n".join(f"<tr>{cells('td', r)}</tr>" for r in rows)
    return (f'<div class="scroll"><table><thead><tr>{cells("th", header)}</tr></thead>'
            f"<tbody>\n{body}\n</tbody></table></div>")


class Figures:
    """Writes figures beside the page and renders them as embedded images."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.stems: list[str] = []

    def embed(self, fig: Figure, stem: str, alt: str, caption: str) -> str:
        # Imported here: the decision service's pages use this module's HTML pieces, and the
        # figures' imports (pandas, the theory's scipy) were a fifth of its start-up.
        from .figures import save_figure

        png = save_figure(fig, self.out, stem)
        self.stems.append(stem)
        data = base64.b64encode(png).decode("ascii")
        return (f'<figure><img src="data:image/png;base64,{data}" alt="{escape(alt)}">'
                f"<figcaption>{caption} <a href=\"{stem}.png\">PNG</a> · "
                f"<a href=\"{stem}.pdf\">PDF</a></figcaption></figure>")


def html_page(title: str, body: str) -> str:
    """A whole self-contained page (the reports' style) around ``body``."""
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<link rel="icon" href="data:,">\n<title>{escape(title)}</title>\n'
            f"<style>{CSS}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")


def write_page(path: Path, title: str, body: str) -> Path:
    """Write the page (:func:`html_page`) to ``path`` whole: to a temporary file, then renamed."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(html_page(title, body), encoding="utf-8")
    tmp.replace(path)
    return path
