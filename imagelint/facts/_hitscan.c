/* The text-facts scan's keyword search in C: which lines of a text hold one of a few keywords.
 *
 * imagelint/facts/gpuindex.py is the reference (``hit_lines``'s Python path, one str.find pass
 * per keyword): this is the same search in one pass over the text, each byte looked up once in a
 * table of the keywords' anchors (each keyword's least common byte), so a file costs about one
 * read of its text whatever the number of keywords, and the loop stops only where an anchor is. Only Latin-1 strings (one byte per character, as every ASCII text is)
 * are searched here; for any other it returns None and Python searches. Every read is
 * bounds-checked against the text; tests/facts/test_textscan.py compares it with the Python path.
 *
 * lines(text, keywords) -> [index, start, end, index, start, end, ...] | None
 *   text      a str whose line breaks are all "\n" (gpuindex.newline_text)
 *   keywords  a tuple of 1 to 64 non-empty ASCII str
 *   index     the line's number counted from 0 (the "\n"s before it); start, end: where the
 *             line starts in text and where it ends (its "\n", or the end of text), once per line
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#define MAX_KEYWORDS 64

/* Printable ASCII from most to least common in source text (Python and C++ sources): each keyword
 * is looked for at its least common byte, so the loop stops at few positions. Only speed depends
 * on this order, never a result: a byte not listed counts as rarest. */
static const char COMMON[] =
    " etnarsoi_lcdup:mf,h)(.gTyb/\"=vwAkSx>OR1ENC#I0;-&<2L[]{}zFP`*D'HB643MVGq!8U5K+jY\\W7@9|~X?%QZJ^";

static int commonness(unsigned char c) {
    const char *at = c ? strchr(COMMON, c) : NULL;
    return at ? (int)(sizeof COMMON - (size_t)(at - COMMON)) : 0;
}

/* The "\n"s in s[0:n]: a plain loop the compiler vectorises. */
static Py_ssize_t count_newlines(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t count = 0;
    for (Py_ssize_t i = 0; i < n; i++) count += s[i] == '\n';
    return count;
}

static int append_triple(PyObject *out, Py_ssize_t a, Py_ssize_t b, Py_ssize_t c) {
    Py_ssize_t values[3] = {a, b, c};
    for (int t = 0; t < 3; t++) {
        PyObject *v = PyLong_FromSsize_t(values[t]);
        int bad = v == NULL || PyList_Append(out, v) < 0;
        Py_XDECREF(v);
        if (bad) return -1;
    }
    return 0;
}

static PyObject *lines(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text, *keywords;
    if (!PyArg_ParseTuple(args, "UO!", &text, &PyTuple_Type, &keywords)) return NULL;
    if (PyUnicode_READY(text) < 0) return NULL;
    if (PyUnicode_KIND(text) != PyUnicode_1BYTE_KIND) Py_RETURN_NONE;
    Py_ssize_t nk = PyTuple_GET_SIZE(keywords);
    if (nk < 1 || nk > MAX_KEYWORDS) {
        PyErr_SetString(PyExc_ValueError, "between 1 and 64 keywords");
        return NULL;
    }
    const char *kw[MAX_KEYWORDS];
    Py_ssize_t kl[MAX_KEYWORDS], anchor[MAX_KEYWORDS];
    unsigned long long at_byte[256]; /* keywords whose anchor is this byte */
    memset(at_byte, 0, sizeof at_byte);
    for (Py_ssize_t k = 0; k < nk; k++) {
        PyObject *item = PyTuple_GET_ITEM(keywords, k);
        if (!PyUnicode_Check(item) || PyUnicode_READY(item) < 0 || !PyUnicode_IS_ASCII(item) ||
            PyUnicode_GET_LENGTH(item) == 0) {
            PyErr_SetString(PyExc_ValueError, "keywords must be non-empty ASCII str");
            return NULL;
        }
        kw[k] = (const char *)PyUnicode_1BYTE_DATA(item);
        kl[k] = PyUnicode_GET_LENGTH(item);
        anchor[k] = 0;
        for (Py_ssize_t j = 1; j < kl[k]; j++)
            if (commonness((unsigned char)kw[k][j]) < commonness((unsigned char)kw[k][anchor[k]])) anchor[k] = j;
        at_byte[(unsigned char)kw[k][anchor[k]]] |= 1ULL << k;
    }
    const unsigned char *s = PyUnicode_1BYTE_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    PyObject *out = PyList_New(0);
    if (out == NULL) return NULL;
    /* ``counted``: a line start whose line number ``index`` is known. */
    Py_ssize_t index = 0, counted = 0, i = 0;
    while (i < n) {
        if (!at_byte[s[i]]) {
            i++;
            continue;
        }
        unsigned long long candidates = at_byte[s[i]];
        int hit = 0;
        while (candidates) {
            int k = __builtin_ctzll(candidates);
            candidates &= candidates - 1;
            Py_ssize_t start = i - anchor[k];
            if (start >= 0 && n - start >= kl[k] && memcmp(s + start, kw[k], (size_t)kl[k]) == 0) {
                hit = 1;
                break;
            }
        }
        if (!hit) {
            i++;
            continue;
        }
        /* A keyword holds no "\n": its line starts after the last "\n" before i, at or after ``counted``. */
        Py_ssize_t line_start = i;
        while (line_start > counted && s[line_start - 1] != '\n') line_start--;
        index += count_newlines(s + counted, line_start - counted);
        counted = line_start;
        const unsigned char *nl = memchr(s + i, '\n', (size_t)(n - i));
        Py_ssize_t end = nl ? (Py_ssize_t)(nl - s) : n;
        if (append_triple(out, index, line_start, end) < 0) {
            Py_DECREF(out);
            return NULL;
        }
        i = end + 1; /* the next line: this one is handed back once */
    }
    return out;
}

static PyMethodDef methods[] = {
    {"lines", lines, METH_VARARGS, "The lines of a text that hold one of the keywords: [index, start, end, ...]."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_hitscan", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__hitscan(void) { return PyModule_Create(&module); }
