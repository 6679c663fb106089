/* The text-facts scan's keyword search in C: which lines of a text hold one of a few keywords.
 *
 * imagelint/facts/gpuindex.py is the reference (``hit_lines``'s Python path, one str.find pass
 * per keyword): this is the same search in one pass over the text, each byte looked up once in a
 * table of the keywords' first bytes, so a file costs about one memory read of its text whatever
 * the number of keywords. Only Latin-1 strings (one byte per character, as every ASCII text is)
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

static PyObject *lines(PyObject *self, PyObject *args) {
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
    Py_ssize_t kl[MAX_KEYWORDS];
    unsigned long long first[256];
    memset(first, 0, sizeof first);
    for (Py_ssize_t k = 0; k < nk; k++) {
        PyObject *item = PyTuple_GET_ITEM(keywords, k);
        if (!PyUnicode_Check(item) || PyUnicode_READY(item) < 0 || !PyUnicode_IS_ASCII(item) ||
            PyUnicode_GET_LENGTH(item) == 0) {
            PyErr_SetString(PyExc_ValueError, "keywords must be non-empty ASCII str");
            return NULL;
        }
        kw[k] = (const char *)PyUnicode_1BYTE_DATA(item);
        kl[k] = PyUnicode_GET_LENGTH(item);
        first[(unsigned char)kw[k][0]] |= 1ULL << k;
    }
    const unsigned char *s = PyUnicode_1BYTE_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    PyObject *out = PyList_New(0);
    if (out == NULL) return NULL;
    Py_ssize_t index = 0, line_start = 0, i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c == '\n') {
            index++;
            line_start = ++i;
            continue;
        }
        unsigned long long candidates = first[c];
        int hit = 0;
        while (candidates) {
            int k = __builtin_ctzll(candidates);
            candidates &= candidates - 1;
            if (n - i >= kl[k] && memcmp(s + i, kw[k], (size_t)kl[k]) == 0) {
                hit = 1;
                break;
            }
        }
        if (!hit) {
            i++;
            continue;
        }
        const unsigned char *nl = memchr(s + i, '\n', (size_t)(n - i));
        Py_ssize_t end = nl ? (Py_ssize_t)(nl - s) : n;
        PyObject *triple[3] = {PyLong_FromSsize_t(index), PyLong_FromSsize_t(line_start), PyLong_FromSsize_t(end)};
        int bad = 0;
        for (int t = 0; t < 3; t++) {
            if (triple[t] == NULL || PyList_Append(out, triple[t]) < 0) bad = 1;
            Py_XDECREF(triple[t]);
        }
        if (bad) {
            Py_DECREF(out);
            return NULL;
        }
        i = end; /* the line's "\n" (if any) is counted on the next turn */
    }
    return out;
}

static PyMethodDef methods[] = {
    {"lines", lines, METH_VARARGS, "The lines of a text that hold one of the keywords: [index, start, end, ...]."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_hitscan", NULL, -1, methods};

PyMODINIT_FUNC PyInit__hitscan(void) { return PyModule_Create(&module); }
