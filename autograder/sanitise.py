"""Student HTML made inert: everything a student wrote that a person's browser renders.

An nbgrader submission reaches two browsers: the instructor's, in formgrader (served by the
instructor's own Jupyter server, with the instructor's session: a script there can rewrite
grades through formgrader's API or start a kernel), and the student's, in the page
`nbgrader generate_feedback` writes.  Both render the autograded notebook with nbconvert,
which passes a markdown cell's raw HTML, a raw cell and an output's text/html or
application/javascript through as they are.

`sanitise_notebook` rewrites a notebook so that nothing in it can run or fetch:

- markdown cells (and text/markdown outputs, and the instructor's comments) are rendered here,
  with nbconvert's own markdown parser, cleaned with nh3 (ammonia, an allow-list sanitiser; see
  docs/grading.md for why not bleach), and stored as one line of HTML inside
  `<div class="hero-student-html">`, which every markdown renderer passes through unchanged;
  math stays TeX inside `<span class="hero-math">` (MathJax typesets it in formgrader), or
  becomes MathML for the feedback page;
- raw cells and text/html outputs are cleaned the same way; every other output type except
  text/plain, PNG, JPEG, GIF and text/latex is dropped (JavaScript, SVG, widget views...);
- attachments: PNG, JPEG and GIF are embedded into the cell's HTML as data: URIs, anything
  else (SVG, HTML) is dropped, as is a reference to a missing attachment (nbconvert would
  fail the whole page on it);
- metadata: widget state and everything else a template could render is dropped; cell
  metadata keeps only the nbgrader keys (with a grade id nbgrader itself could have made),
  tags and raw_mimetype.

Links keep http, https and mailto (and #fragments); images keep data: PNG, JPEG, GIF and WebP
only (no request to any server, not even the instructor's); `style` keeps a few properties
with plain values (no url(), no expression, no functions but rgb/hsl).
"""

import base64
import binascii
import html
import re
import secrets

import nh3
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbconvert.preprocessors import Preprocessor
from traitlets import Bool, Enum

WRAPPER_CLASS = "hero-student-html"
_OPEN, _CLOSE = f'<div class="{WRAPPER_CLASS}">', "</div>"
ID_PREFIX = "student-"

# The feedback page is static: no script at all, images only from data: URIs, nothing fetched.
FEEDBACK_CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:; "
                "base-uri 'none'; form-action 'none'")

MATHJAX_URL = "https://cdnjs.cloudflare.com/ajax/libs/mathjax/2.7.7/latest.js?config=TeX-AMS_CHTML-full,Safe"


def formgrade_csp(nonce):
    """formgrader's submission page: only the template's own scripts (they carry the nonce, and
    what they load themselves: MathJax's parts); no inline handler, no javascript: URL."""
    return (f"default-src 'self'; script-src 'nonce-{nonce}' 'strict-dynamic'; style-src 'self' 'unsafe-inline'; "
            "img-src 'self' data:; font-src 'self' data: https://cdnjs.cloudflare.com; connect-src 'self'; "
            "object-src 'none'; frame-src 'none'; child-src 'none'; base-uri 'none'; form-action 'self'")


def new_nonce():
    return secrets.token_urlsafe(18)


# --- the allow-list --------------------------------------------------------------------

TAGS = {
    "a", "abbr", "b", "blockquote", "br", "caption", "cite", "code", "col", "colgroup", "dd", "del", "details",
    "dfn", "div", "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img",
    "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "samp", "small", "span", "strike", "strong", "sub",
    "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "tt", "u", "ul", "var", "wbr",
}
# what latex2mathml writes (the feedback page's math); no maction, semantics or annotation-xml
MATHML_TAGS = {
    "math", "mi", "mn", "mo", "ms", "mspace", "mtext", "mrow", "mfrac", "msqrt", "mroot", "mstyle", "merror",
    "mpadded", "mphantom", "mfenced", "menclose", "msub", "msup", "msubsup", "munder", "mover", "munderover",
    "mmultiscripts", "mprescripts", "none", "mtable", "mtr", "mtd", "mlabeledtr",
}
MATHML_ATTRIBUTES = {
    "display", "mathvariant", "displaystyle", "scriptlevel", "stretchy", "fence", "separator", "separators",
    "lspace", "rspace", "minsize", "maxsize", "largeop", "movablelimits", "accent", "accentunder",
    "linethickness", "columnalign", "rowalign", "columnspacing", "rowspacing", "columnlines", "rowlines",
    "frame", "width", "height", "depth", "notation", "open", "close", "mathcolor", "mathbackground", "mathsize",
}
# removed with everything inside them (the others lose only their tags)
CONTENT_TAGS = {"script", "style", "template", "noscript", "noembed", "noframes", "textarea", "title", "xmp",
                "iframe", "object", "embed", "svg", "select", "option", "plaintext", "applet", "frameset"}

_ATTRIBUTES = {
    "*": {"title", "lang", "dir", "id", "style"},
    "a": {"href"},
    "img": {"src", "alt", "width", "height"},
    "td": {"colspan", "rowspan", "align"},
    "th": {"colspan", "rowspan", "align", "scope"},
    "ol": {"start"},
    "col": {"span"},
    "colgroup": {"span"},
    "details": {"open"},
}


def _pygments_classes():
    from pygments.token import STANDARD_TYPES

    return {name for name in STANDARD_TYPES.values() if name}


_CLASSES = {"div": {"highlight", WRAPPER_CLASS}, "span": _pygments_classes() | {"hero-math", "hero-math-display"},
            "a": {"anchor-link"}}

_SAFE_URL = re.compile(r"^(?:https?://|mailto:)", re.I)
_SAFE_IMAGE = re.compile(r"^data:image/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/\s]*=*\s*$", re.I)
_STYLE_PROPERTIES = {"color", "background-color", "text-align", "vertical-align", "font-weight", "font-style",
                     "text-decoration", "width", "height", "max-width", "padding", "border", "border-collapse",
                     "white-space"}
_STYLE_VALUE = re.compile(r"^(?:[#\w\s.,%+-]+|(?:rgba?|hsla?)\(\s*[\d\s.,%]+\))$")
_CONTROL = re.compile(r"[\x00-\x20\x7f]+")


def _style(value):
    kept = []
    for declaration in value.split(";"):
        name, colon, setting = declaration.partition(":")
        name, setting = name.strip().lower(), setting.strip()
        if colon and name in _STYLE_PROPERTIES and _STYLE_VALUE.match(setting) and "\\" not in setting:
            kept.append(f"{name}: {setting}")
    return "; ".join(kept) or None


def _attribute_filter(tag, attribute, value):
    if attribute == "href":
        bare = _CONTROL.sub("", value)
        if bare.startswith("#"):
            return bare if bare.startswith("#" + ID_PREFIX) else "#" + ID_PREFIX + bare[1:]
        return value if _SAFE_URL.match(bare) else None
    if attribute == "src":
        return value if tag == "img" and _SAFE_IMAGE.match(value) else None
    if attribute == "style":
        return _style(value)
    return value


def _only_fragments(url):
    return url if url.startswith("#") else None


def _cleaner(mathml):
    attributes = {tag: set(names) for tag, names in _ATTRIBUTES.items()}
    tags = set(TAGS)
    if mathml:
        tags |= MATHML_TAGS
        for tag in MATHML_TAGS:
            attributes[tag] = set(MATHML_ATTRIBUTES)
    return nh3.Cleaner(tags=tags, clean_content_tags=CONTENT_TAGS - tags, attributes=attributes,
                       attribute_filter=_attribute_filter, strip_comments=True, link_rel="noopener noreferrer",
                       url_schemes={"http", "https", "mailto", "data"}, allowed_classes=_CLASSES,
                       url_relative=_only_fragments, id_prefix=ID_PREFIX)


_CLEANERS = {}


def clean_html(text, mathml=False):
    """An HTML fragment with only the allow-listed tags, attributes, URLs and styles left."""
    if mathml not in _CLEANERS:
        _CLEANERS[mathml] = _cleaner(mathml)
    return _CLEANERS[mathml].clean(text if isinstance(text, str) else "")


# --- markdown ----------------------------------------------------------------------------

_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif")


def _attachment_uri(attachments, name):
    bundle = attachments.get(name) if isinstance(attachments, dict) else None
    if not isinstance(bundle, dict):
        return ""
    for mime in _IMAGE_TYPES:
        data = bundle.get(mime)
        if isinstance(data, str) and _is_base64(data):
            return f"data:{mime};base64,{''.join(data.split())}"
    return ""


def _is_base64(data):
    try:
        base64.b64decode("".join(data.split()), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _mathml(tex, display):
    from latex2mathml.converter import convert

    try:
        return convert(tex, display="block" if display else "inline")
    except Exception:  # a formula the converter cannot parse stays TeX, as text
        return None


class _Renderer(IPythonRenderer):
    """nbconvert's renderer (headings with anchors, pygments, tables), with math kept apart,
    attachments limited to raster images, and nothing that raises on a student's input."""

    def __init__(self, attachments, mathml):
        super().__init__(escape=False, attachments={})
        self._attachments = attachments or {}
        self._as_mathml = mathml

    def _math(self, tex, display, shown):
        if self._as_mathml:
            converted = _mathml(tex, display)
            if converted is not None:
                return converted
        classes = "hero-math hero-math-display" if display else "hero-math"
        return f'<span class="{classes}">{html.escape(shown, quote=False)}</span>'

    def inline_math(self, body):
        return self._math(body, False, f"${body}$")

    def block_math(self, body):
        return self._math(body, True, f"$${body}$$")

    def latex_environment(self, name, body):
        text = f"\\begin{{{name}}}{body}\\end{{{name}}}"
        return self._math(text, True, text)

    def multiline_math(self, text):
        return html.escape(text, quote=False)

    def block_mermaidjs(self, code):
        return f"<pre><code>{html.escape(code, quote=False)}</code></pre>\n"

    def _embed_image_or_attachment(self, src):
        if src.startswith("attachment:"):
            return _attachment_uri(self._attachments, src[len("attachment:"):])
        return src

    def task_list_item(self, text, checked=False):
        mark = "☑ " if checked else "☐ "
        if text.startswith("<p>"):
            return f"<li>{text.replace('<p>', '<p>' + mark, 1)}</li>\n"
        return f"<li>{mark}{text}</li>\n"


def _render(source, attachments, mathml):
    renderer = _Renderer(attachments, mathml)
    parser = MarkdownWithMath(renderer=renderer)
    renderer.register("task_list_item", lambda _renderer, text, checked=False: renderer.task_list_item(text, checked))
    try:
        return parser.render(source)
    except Exception:  # nbconvert's parser failing on a student's text: show it as text
        return f"<pre>{html.escape(source, quote=False)}</pre>"


_MATH_SPAN = re.compile(r'<span class="hero-math( hero-math-display)?">([^<]*)</span>')


def _spans_to_mathml(text):
    def convert(match):
        display, tex = bool(match.group(1)), html.unescape(match.group(2))
        for opening, closing in (("$$", "$$"), ("$", "$")):
            if len(tex) > len(opening) + len(closing) - 1 and tex.startswith(opening) and tex.endswith(closing):
                tex = tex[len(opening):-len(closing)]
                break
        return _mathml(tex, display) or match.group(0)

    return _MATH_SPAN.sub(convert, text)


def _one_line(text):
    """Cleaned HTML as one line inside the wrapper: a markdown renderer passes a line that
    starts with <div as an HTML block, whole (a blank line would end it)."""
    return _OPEN + text.strip().replace("\r", "").replace("\n", "&#10;") + _CLOSE


def is_sanitised(source):
    return isinstance(source, str) and source.startswith(_OPEN) and source.endswith(_CLOSE) and "\n" not in source


def safe_markdown(source, attachments=None, mathml=False):
    """A markdown source (a cell, a text/markdown output, a comment) as markdown that renders to
    cleaned HTML only.  Idempotent: a source it wrote is cleaned again, not rendered again."""
    if not isinstance(source, str):
        source = ""
    if is_sanitised(source):
        inner = clean_html(source[len(_OPEN):-len(_CLOSE)], mathml=mathml)
        if mathml:
            inner = clean_html(_spans_to_mathml(inner), mathml=True)
    else:
        inner = clean_html(_render(source, attachments, mathml), mathml=mathml)
    return _one_line(inner)


# --- outputs, cells, metadata ----------------------------------------------------------

_TEXT_TYPES = ("text/plain", "text/latex")
_GRADE_ID = re.compile(r"^[A-Za-z0-9_.\-]{1,200}$")
_TAG = re.compile(r"^[\w.\-]{1,100}$")
_CELL_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _text(value):
    if isinstance(value, list):
        value = "".join(v for v in value if isinstance(v, str))
    return value if isinstance(value, str) else ""


def _image_metadata(metadata):
    kept = {}
    if not isinstance(metadata, dict):
        return kept
    for mime, meta in metadata.items():
        if mime in ("image/png", "image/jpeg", "image/gif") and isinstance(meta, dict):
            sizes = {k: v for k, v in meta.items() if k in ("width", "height") and isinstance(v, (int, float))
                     and not isinstance(v, bool)}
            if sizes:
                kept[mime] = sizes
    return kept


def sanitise_output(output, mathml=False):
    """The output as something a template renders as text or a raster image; None to drop it."""
    from nbformat import NotebookNode

    kind = output.get("output_type")
    if kind == "stream":
        return NotebookNode(output_type="stream", name="stderr" if output.get("name") == "stderr" else "stdout",
                            text=_text(output.get("text")))
    if kind == "error":
        traceback = output.get("traceback")
        return NotebookNode(output_type="error", ename=_text(output.get("ename")), evalue=_text(output.get("evalue")),
                            traceback=[line for line in traceback if isinstance(line, str)]
                            if isinstance(traceback, list) else [])
    if kind not in ("display_data", "execute_result"):
        return None
    data = output.get("data") if isinstance(output.get("data"), dict) else {}
    kept = {}
    for mime in _TEXT_TYPES:
        if mime in data:
            kept[mime] = _text(data[mime])
    for mime in _IMAGE_TYPES:
        if isinstance(data.get(mime), str) and _is_base64(data[mime]):
            kept[mime] = "".join(data[mime].split())
    if "text/html" in data:
        kept["text/html"] = clean_html(_text(data["text/html"]), mathml=mathml)
    if "text/markdown" in data:
        kept["text/markdown"] = safe_markdown(_text(data["text/markdown"]), mathml=mathml)
    if not kept:
        return None
    result = NotebookNode(output_type=kind, data=NotebookNode(kept), metadata=NotebookNode(_image_metadata(
        output.get("metadata"))))
    if kind == "execute_result":
        count = output.get("execution_count")
        result.execution_count = count if isinstance(count, int) and not isinstance(count, bool) else None
    return result


def _nbgrader_metadata(meta, mathml):
    if not isinstance(meta, dict) or not isinstance(meta.get("grade_id"), str) or not _GRADE_ID.match(meta["grade_id"]):
        return None
    kept = {}
    for key, value in meta.items():
        if key in ("grade", "solution", "locked", "task") and isinstance(value, bool):
            kept[key] = value
        elif key in ("points", "score") and isinstance(value, (int, float)) and not isinstance(value, bool):
            kept[key] = value
        elif key in ("grade_id", "checksum", "cell_type") and isinstance(value, str) and _GRADE_ID.match(value):
            kept[key] = value
        elif key == "schema_version" and isinstance(value, int):
            kept[key] = value
        elif key == "comment" and (value is None or isinstance(value, str)):
            kept[key] = safe_markdown(value, mathml=mathml) if value else value
    return kept


def _cell_metadata(metadata, mathml):
    from nbformat import NotebookNode

    kept = {}
    if not isinstance(metadata, dict):
        return NotebookNode()
    if "nbgrader" in metadata:
        nbgrader = _nbgrader_metadata(metadata["nbgrader"], mathml)
        if nbgrader is not None:
            kept["nbgrader"] = NotebookNode(nbgrader)
    tags = metadata.get("tags")
    if isinstance(tags, list):
        kept["tags"] = [tag for tag in tags if isinstance(tag, str) and _TAG.match(tag)]
    for key in ("deletable", "editable"):
        if isinstance(metadata.get(key), bool):
            kept[key] = metadata[key]
    mime = metadata.get("raw_mimetype")
    if isinstance(mime, str) and re.match(r"^[\w.+/-]{1,100}$", mime):
        kept["raw_mimetype"] = mime
    return NotebookNode(kept)


def _notebook_metadata(metadata):
    from nbformat import NotebookNode

    kept = {}
    if not isinstance(metadata, dict):
        return NotebookNode()
    kernelspec = metadata.get("kernelspec")
    if isinstance(kernelspec, dict):
        spec = {k: v for k, v in kernelspec.items() if k in ("name", "display_name", "language")
                and isinstance(v, str) and re.match(r"^[\w .()+-]{1,100}$", v)}
        if "name" in spec and "display_name" in spec:  # what nbformat's schema requires of one
            kept["kernelspec"] = NotebookNode(spec)
    language = metadata.get("language_info")
    if isinstance(language, dict) and isinstance(language.get("name"), str) and re.match(r"^\w{1,50}$",
                                                                                          language["name"]):
        kept["language_info"] = NotebookNode(name=language["name"])
    return NotebookNode(kept)


def sanitise_notebook(nb, mathml=False):
    """The notebook, in place (and returned), with nothing left that could run or fetch."""
    nb.metadata = _notebook_metadata(nb.get("metadata"))
    for cell in nb.cells:
        kind = cell.get("cell_type")
        cell.metadata = _cell_metadata(cell.get("metadata"), mathml)
        if isinstance(cell.get("id"), str) and not _CELL_ID.match(cell["id"]):
            cell.id = secrets.token_hex(8)
        if kind == "markdown":
            cell.source = safe_markdown(_text(cell.get("source")), cell.get("attachments"), mathml=mathml)
        elif kind == "code":
            cell.source = _text(cell.get("source"))
            outputs = cell.get("outputs") if isinstance(cell.get("outputs"), list) else []
            cell.outputs = [kept for kept in (sanitise_output(o, mathml) for o in outputs if isinstance(o, dict))
                            if kept is not None]
            count = cell.get("execution_count")
            cell.execution_count = count if isinstance(count, int) and not isinstance(count, bool) else None
        else:  # raw, or a type nbformat does not know: its text, cleaned, whatever it claims to be
            cell.source = clean_html(_text(cell.get("source")))
            cell.pop("outputs", None)
        cell.pop("attachments", None)  # markdown embedded its images above; nothing else may use them
    return nb


class SanitiseStudentHTML(Preprocessor):
    """nbconvert/nbgrader preprocessor: `sanitise_notebook` (math stays TeX for MathJax).

    Runs last in `nbgrader autograde` (so the autograded notebook, which formgrader and
    generate_feedback both render, is clean), in formgrader's own exporter (HTMLExporter's
    preprocessors) and at the end of generate_feedback's.  In an exporter it also puts a fresh
    nonce in the resources for the page's Content-Security-Policy (autograder/templates/)."""

    enabled = Bool(True).tag(config=True)
    math = Enum(["tex", "mathml"], "tex", help="math as TeX for MathJax, or as MathML").tag(config=True)

    def preprocess(self, nb, resources):
        sanitise_notebook(nb, mathml=self.math == "mathml")
        if resources is not None and "hero_csp_nonce" not in resources:
            resources["hero_csp_nonce"] = nonce = new_nonce()
            resources["hero_csp"] = formgrade_csp(nonce)
            resources["hero_mathjax_url"] = MATHJAX_URL
        return nb, resources


class SanitiseStudentHTMLToMathML(SanitiseStudentHTML):
    """The same, with math as MathML: the feedback page draws it with no script."""

    math = Enum(["tex", "mathml"], "mathml").tag(config=True)
