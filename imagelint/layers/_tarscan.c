/* The tar walk's inner loop in C: parse the plain headers in a window of a layer's tar stream
 * and hand back only the members the capture rules might want.
 *
 * imagelint/layers/tarwalk.py is the reference: this loop accepts only the usual spellings
 * (ustar/GNU headers with octal fields, checksum over unsigned bytes, UTF-8 names that need no
 * normalisation beyond a leading "./" and a trailing "/", type flags '0'-'7' and NUL) and stops
 * at anything else, so Python's parser decides every unusual header, error and message itself.
 * Every read is bounds-checked against the window; nothing is written outside the objects it
 * creates. tests/layers/test_tarscan.py compares it with the Python walk on generated and
 * hostile archives.
 *
 * take() (below scan()) is the reader's step for the members scan() handed back that the window
 * holds whole; tests/layers/test_native_take.py holds it to the reader's Python step.
 *
 * scan(window, pos, base, budget, filter, seen) -> (members, pos, headers, status, last)
 *   window  a bytes-like object; pos: offset in it of the next header; base: the stream offset
 *           of window[0]; budget: at most this many headers.
 *   filter  (return_all, tops, prefix_len, prefixes, exts, ext_tops, suffixes, infixes): the
 *           rule index's buckets (imagelint.layers.match.RuleMatcher.prefilter); tops maps a
 *           top directory to one regex of its rules that have no literal to index.
 *   seen    a set of the paths handed back so far in this layer; extended here.
 *   members [(name, path, type, size, mode, linkname, header_offset), ...] for symlinks,
 *           hardlinks, whiteouts, paths already seen, and paths some rule's bucket holds.
 *   pos     where the next header starts (past the window when the last member's data is).
 *   status  0: no whole header at pos in the window; 1: an all-zero block at pos; 2: the header
 *           at pos is for the Python parser (or the budget is spent).
 *   last    where in the window the last header scanned starts (-1: none), so a truncated
 *           member is named in the error even when it was not handed back.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#define BLOCK 512
#define ST_MORE 0
#define ST_ZERO 1
#define ST_PYTHON 2

/* Octal digits with optional leading spaces and trailing spaces/NULs, at least one digit:
 * exactly the fields Python's int(field.rstrip(b"\0 "), 8) reads the same way. */
static int parse_octal(const unsigned char *f, Py_ssize_t len, long long *out) {
    Py_ssize_t i = 0;
    long long v = 0;
    int digits = 0;
    while (i < len && f[i] == ' ') i++;
    while (i < len && f[i] >= '0' && f[i] <= '7') {
        if (digits >= 21) return 0; /* would not fit: Python decides */
        v = (v << 3) | (f[i] - '0');
        digits++;
        i++;
    }
    if (!digits) return 0;
    while (i < len) {
        if (f[i] != ' ' && f[i] != 0) return 0;
        i++;
    }
    *out = v;
    return 1;
}

static Py_ssize_t cstr_len(const unsigned char *f, Py_ssize_t max) {
    const unsigned char *nul = memchr(f, 0, (size_t)max);
    return nul ? (Py_ssize_t)(nul - f) : max;
}

static int contains(const char *s, Py_ssize_t n, const char *needle, Py_ssize_t m) {
    for (Py_ssize_t i = 0; i + m <= n; i++) {
        if (memcmp(s + i, needle, (size_t)m) == 0) return 1;
    }
    return 0;
}

/* 1: in the set; 0: not; -1: error. */
static int in_set(PyObject *set, PyObject *key) {
    if (key == NULL) return -1;
    return PySet_Contains(set, key);
}

/* The prefilter tuple, unpacked once per scan() call (borrowed references). */
typedef struct {
    int return_all;
    PyObject *tops, *prefixes, *exts, *ext_tops, *suffixes, *infixes;
    Py_ssize_t prefix_len;
} Filter;

static int interesting(const char *path, Py_ssize_t plen, PyObject *upath, char type, const Filter *f,
                       PyObject *seen) {
    int r;
    if (type == '1' || type == '2') return 1;
    Py_ssize_t slash = -1, first_slash = -1;
    for (Py_ssize_t i = 0; i < plen; i++) {
        if (path[i] == '/') {
            if (first_slash < 0) first_slash = i;
            slash = i;
        }
    }
    const char *base = path + slash + 1;
    Py_ssize_t blen = plen - slash - 1;
    if (blen >= 4 && memcmp(base, ".wh.", 4) == 0) return 1;
    r = PySet_Contains(seen, upath);
    if (r != 0) return r;
    if (slash < 0) return 1; /* top-level names: few, and "*" rules want them */
    if (f->return_all) return 1;

    PyObject *tops = f->tops, *prefixes = f->prefixes, *exts = f->exts, *ext_tops = f->ext_tops;
    PyObject *suffixes = f->suffixes, *infixes = f->infixes;
    Py_ssize_t prefix_len = f->prefix_len;

    PyObject *key = PyUnicode_DecodeUTF8(path, first_slash, "strict");
    if (key == NULL) return -1;
    PyObject *rx = PyDict_GetItemWithError(tops, key); /* borrowed */
    Py_DECREF(key);
    if (rx == NULL && PyErr_Occurred()) return -1;
    if (rx != NULL) { /* the rules of this top directory with no literal to index: their regex decides */
        static PyObject *fullmatch = NULL;
        if (fullmatch == NULL && (fullmatch = PyUnicode_InternFromString("fullmatch")) == NULL) return -1;
        PyObject *m = PyObject_CallMethodOneArg(rx, fullmatch, upath);
        if (m == NULL) return -1;
        r = m != Py_None;
        Py_DECREF(m);
        if (r) return 1;
    }

    if (PySet_GET_SIZE(prefixes) && prefix_len > 0 && blen >= prefix_len) {
        /* prefix_len counts characters: take that many UTF-8 characters of the base. */
        PyObject *ubase = PyUnicode_DecodeUTF8(base, blen, "strict");
        if (ubase == NULL) return -1;
        PyObject *head = PyUnicode_Substring(ubase, 0, prefix_len);
        Py_DECREF(ubase);
        if (head == NULL) return -1;
        r = PyUnicode_GET_LENGTH(head) == prefix_len ? PySet_Contains(prefixes, head) : 0;
        Py_DECREF(head);
        if (r != 0) return r;
    }
    const char *dot = NULL;
    for (Py_ssize_t i = blen - 1; i >= 0; i--) {
        if (base[i] == '.') {
            dot = base + i;
            break;
        }
    }
    if (dot != NULL) {
        Py_ssize_t elen = blen - (dot - base);
        key = PyUnicode_DecodeUTF8(dot, elen, "strict");
        r = in_set(exts, key);
        Py_XDECREF(key);
        if (r != 0) return r;
        if (PyDict_GET_SIZE(ext_tops)) {
            /* "top\0.ext" */
            char *buf = PyMem_Malloc((size_t)(first_slash + 1 + elen));
            if (buf == NULL) {
                PyErr_NoMemory();
                return -1;
            }
            memcpy(buf, path, (size_t)first_slash);
            buf[first_slash] = 0;
            memcpy(buf + first_slash + 1, dot, (size_t)elen);
            key = PyUnicode_DecodeUTF8(buf, first_slash + 1 + elen, "strict");
            PyMem_Free(buf);
            if (key == NULL) return -1;
            PyObject *leads = PyDict_GetItemWithError(ext_tops, key); /* borrowed */
            Py_DECREF(key);
            if (leads == NULL && PyErr_Occurred()) return -1;
            if (leads != NULL) { /* a rule's match starts with its literal lead ("usr/src/") */
                if (!PyTuple_Check(leads)) {
                    PyErr_SetString(PyExc_TypeError, "scan: bad filter");
                    return -1;
                }
                for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(leads); i++) {
                    Py_ssize_t m;
                    const char *l = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(leads, i), &m);
                    if (l == NULL) return -1;
                    if (m <= plen && memcmp(path, l, (size_t)m) == 0) return 1;
                }
            }
        }
    }
    Py_ssize_t n = PyTuple_GET_SIZE(suffixes);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t m;
        const char *s = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(suffixes, i), &m);
        if (s == NULL) return -1;
        if (m <= blen && memcmp(base + blen - m, s, (size_t)m) == 0) return 1;
    }
    n = PyTuple_GET_SIZE(infixes);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t m;
        const char *s = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(infixes, i), &m);
        if (s == NULL) return -1;
        if (contains(base, blen, s, m)) return 1;
    }
    return 0;
}

static PyObject *scan(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, budget;
    long long base;
    PyObject *filter, *seen;
    if (!PyArg_ParseTuple(args, "y*nLnO!O!", &view, &pos, &base, &budget, &PyTuple_Type, &filter, &PySet_Type, &seen))
        return NULL;
    if (PyTuple_GET_SIZE(filter) != 8 || !PyDict_Check(PyTuple_GET_ITEM(filter, 1)) ||
        !PyLong_Check(PyTuple_GET_ITEM(filter, 2)) || !PyAnySet_Check(PyTuple_GET_ITEM(filter, 3)) ||
        !PyAnySet_Check(PyTuple_GET_ITEM(filter, 4)) || !PyDict_Check(PyTuple_GET_ITEM(filter, 5)) ||
        !PyTuple_Check(PyTuple_GET_ITEM(filter, 6)) || !PyTuple_Check(PyTuple_GET_ITEM(filter, 7))) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_TypeError, "scan: bad filter");
        return NULL;
    }
    Filter f;
    f.return_all = PyObject_IsTrue(PyTuple_GET_ITEM(filter, 0));
    f.tops = PyTuple_GET_ITEM(filter, 1);
    f.prefix_len = PyLong_AsSsize_t(PyTuple_GET_ITEM(filter, 2));
    f.prefixes = PyTuple_GET_ITEM(filter, 3);
    f.exts = PyTuple_GET_ITEM(filter, 4);
    f.ext_tops = PyTuple_GET_ITEM(filter, 5);
    f.suffixes = PyTuple_GET_ITEM(filter, 6);
    f.infixes = PyTuple_GET_ITEM(filter, 7);
    if (f.return_all < 0 || (f.prefix_len < 0 && PyErr_Occurred())) {
        PyBuffer_Release(&view);
        return NULL;
    }
    const unsigned char *buf = view.buf;
    Py_ssize_t len = view.len;
    Py_ssize_t headers = 0, last = -1;
    int status = ST_MORE;
    PyObject *members = PyList_New(0);
    if (members == NULL) goto fail;
    if (pos < 0) pos = len; /* nonsense from the caller: scan nothing */

    while (1) {
        if (pos > len - BLOCK) { /* no whole header left in the window (also pos past the end) */
            status = ST_MORE;
            break;
        }
        if (headers >= budget) {
            status = ST_PYTHON;
            break;
        }
        const unsigned char *h = buf + pos;
        int zero = 1;
        for (int i = 0; i < BLOCK; i++) {
            if (h[i]) {
                zero = 0;
                break;
            }
        }
        if (zero) {
            status = ST_ZERO;
            break;
        }
        /* checksum over unsigned bytes, the field counted as spaces */
        /* (a plain sum over the block, which the compiler vectorises, less the field's own bytes) */
        long long sum = 8 * ' ', stored;
        for (int i = 0; i < BLOCK; i++) sum += h[i];
        for (int i = 148; i < 156; i++) sum -= h[i];
        if (!parse_octal(h + 148, 8, &stored) || stored != sum) {
            status = ST_PYTHON;
            break;
        }
        char type = h[156] ? (char)h[156] : '0';
        if (type < '0' || type > '7') {
            status = ST_PYTHON;
            break;
        }
        long long size, mode;
        if (h[124] & 0x80 || !parse_octal(h + 124, 12, &size) || h[100] & 0x80 || !parse_octal(h + 100, 8, &mode)) {
            status = ST_PYTHON;
            break;
        }
        if (type >= '1' && type <= '6') size = 0;
        /* name: ustar prefix "/" name */
        char name[256 + 2];
        Py_ssize_t nlen = cstr_len(h, 100);
        Py_ssize_t plen = 0;
        if (memcmp(h + 257, "ustar\0", 6) == 0 && h[345] != 0) plen = cstr_len(h + 345, 155);
        if (plen) {
            memcpy(name, h + 345, (size_t)plen);
            name[plen] = '/';
            memcpy(name + plen + 1, h, (size_t)nlen);
            nlen += plen + 1;
        } else {
            memcpy(name, h, (size_t)nlen);
        }
        /* the Python walker's fast normalisation: "./" dropped, one trailing "/" dropped */
        const char *p = name;
        Py_ssize_t pl = nlen;
        if (pl >= 2 && p[0] == '.' && p[1] == '/') {
            p += 2;
            pl -= 2;
        }
        if (pl == 0 || p[0] == '/' || p[0] == '.' || contains(p, pl, "/.", 2) || contains(p, pl, "//", 2)) {
            status = ST_PYTHON;
            break;
        }
        if (p[pl - 1] == '/') pl--;
        if (pl == 0) {
            status = ST_PYTHON;
            break;
        }
        PyObject *upath = PyUnicode_DecodeUTF8(p, pl, "strict");
        if (upath == NULL) {
            PyErr_Clear(); /* not UTF-8: Python decodes it with replacements and warns */
            status = ST_PYTHON;
            break;
        }
        Py_ssize_t llen = h[157] ? cstr_len(h + 157, 100) : 0;
        PyObject *ulink = PyUnicode_DecodeUTF8((const char *)h + 157, llen, "strict");
        if (ulink == NULL) {
            PyErr_Clear();
            Py_DECREF(upath);
            status = ST_PYTHON;
            break;
        }
        long long next = (long long)pos + BLOCK + ((size + BLOCK - 1) / BLOCK) * BLOCK;
        int want = interesting(p, pl, upath, type, &f, seen);
        if (want < 0) {
            Py_DECREF(upath);
            Py_DECREF(ulink);
            goto fail;
        }
        headers++;
        last = pos;
        if (want) {
            PyObject *uname = PyUnicode_DecodeUTF8(name, nlen, "strict");
            if (uname == NULL) {
                PyErr_Clear(); /* cannot happen (the path decoded), but Python would decide */
                Py_DECREF(upath);
                Py_DECREF(ulink);
                headers--;
                last = -1; /* (unreachable) the parser takes this header again */
                status = ST_PYTHON;
                break;
            }
            PyObject *item = Py_BuildValue("(NOC LLNL)", uname, upath, (int)type, size, mode & 07777, ulink,
                                           base + (long long)pos);
            if (item == NULL) {
                Py_DECREF(upath);
                goto fail;
            }
            int bad = PySet_Add(seen, upath) < 0 || PyList_Append(members, item) < 0;
            Py_DECREF(item);
            Py_DECREF(upath);
            if (bad) goto fail;
        } else {
            Py_DECREF(upath);
            Py_DECREF(ulink);
        }
        if (next > PY_SSIZE_T_MAX) { /* absurd size: Python reports it */
            pos = PY_SSIZE_T_MAX;
            status = ST_MORE;
            break;
        }
        pos = (Py_ssize_t)next;
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("(Nnnin)", members, pos, headers, status, last);
fail:
    PyBuffer_Release(&view);
    Py_XDECREF(members);
    return NULL;
}

/* take(members, first, window, base, context) -> taken
 *
 * The reader's window step (imagelint/layers/reader.py, _LayerCapture.add_in_window) for the
 * members an application tree is made of, without a Python frame per member: from members[first],
 * as long as each is one the reader takes in the window its usual way, it records each and returns
 * how many it took; it stops at the first it does not take, which the reader then takes in Python
 * (_LayerCapture._take: the reference, which every member this takes would get the same from).
 *
 *   members  scan()'s list; window, base: as for scan() (a member's data is
 *            window[offset + 512 - base:][:size]).
 *   context  (entries, scans, match, shapes, settled, entry_type, file, directory, symlink, layer_index,
 *            layer_digest, max_read): the layer's dicts of entries and scan results (filled here),
 *            the rule matcher's match(path) and what it decides by a path's shape alone
 *            (RuleMatcher.shapes, or None: match() for every path), the scan rules whose scanner class settles a member
 *            held whole ([(rule, policy), ...], by identity; the reader adds them), Entry, the
 *            three kind names, the layer's index and digest, the per-member read limit.
 *   policy   (whole_limit, sniff, binary, keywords, search, by_ext, by_extension): a member of at
 *            most whole_limit bytes whose first sniff bytes hold a NUL is `binary`; one that does
 *            not start with "#!", whose extension (as the text-facts scanner takes it, case kept)
 *            by_extension maps to (result, max_size) with size <= max_size, and in which
 *            search(bytes, keywords, True) finds nothing, is `result` (by_ext caches by_extension,
 *            bounded). Anything else stops the loop: the scanner's own scan_whole decides it.
 *
 * Taken: a new path (not in entries), no ".wh." in it, a name not starting with "/", data whole in
 * the window, and: a symlink (an entry, no rule asked); a directory (an entry when a rule matches);
 * a regular file no rule matches (nothing recorded); a regular file a settling rule matches and
 * the policy settles (an entry and its scan result). Errors of match() and Entry() propagate, as in
 * Python; a failing search stops the loop (scan_whole meets it again and says so). */
#define MAX_EXTENSIONS 1024

static PyObject *wh_marker = NULL; /* ".wh." */

/* The member's extension as textscan._extension takes it, before lower(): after the base name's
 * last "." when one follows its leading dots, else "". New reference; NULL on error. */
static PyObject *extension_of(PyObject *path) {
    Py_ssize_t len = PyUnicode_GET_LENGTH(path);
    Py_ssize_t slash = PyUnicode_FindChar(path, '/', 0, len, -1);
    if (slash == -2) return NULL;
    Py_ssize_t j = slash + 1;
    while (j < len && PyUnicode_READ_CHAR(path, j) == '.') j++;
    Py_ssize_t dot = j < len ? PyUnicode_FindChar(path, '.', j, len, -1) : -1;
    if (dot == -2) return NULL;
    if (dot < 0) return PyUnicode_New(0, 0);
    return PyUnicode_Substring(path, dot + 1, len);
}

/* The policy tuple of rule in settled, borrowed; NULL when the rule is not there. */
static PyObject *policy_of(PyObject *settled, PyObject *rule) {
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(settled); j++) {
        PyObject *pair = PyList_GET_ITEM(settled, j);
        if (PyTuple_Check(pair) && PyTuple_GET_SIZE(pair) == 2 && PyTuple_GET_ITEM(pair, 0) == rule)
            return PyTuple_GET_ITEM(pair, 1);
    }
    return NULL;
}

/* The scan result policy gives the member data[0:size] held whole (borrowed: binary or a cached
 * result); NULL with no error when it does not settle it, NULL with an error on failure. */
static PyObject *settle(PyObject *policy, PyObject *path, const unsigned char *data, long long size) {
    Py_ssize_t whole_limit, sniff;
    PyObject *binary, *keywords, *search, *by_ext, *by_extension;
    if (!PyArg_ParseTuple(policy, "nnOOOO!O", &whole_limit, &sniff, &binary, &keywords, &search, &PyDict_Type, &by_ext,
                          &by_extension))
        return NULL;
    if (size > whole_limit || sniff < 0) return NULL;
    if (memchr(data, 0, (size_t)(size < sniff ? size : sniff)) != NULL) return binary;
    if (size >= 2 && data[0] == '#' && data[1] == '!') return NULL;
    PyObject *ext = extension_of(path);
    if (ext == NULL) return NULL;
    PyObject *known = PyDict_GetItemWithError(by_ext, ext); /* borrowed */
    if (known == NULL) {
        if (PyErr_Occurred() || PyDict_GET_SIZE(by_ext) >= MAX_EXTENSIONS) {
            Py_DECREF(ext);
            return NULL;
        }
        PyObject *made = PyObject_CallOneArg(by_extension, ext);
        int bad = made == NULL || PyDict_SetItem(by_ext, ext, made) < 0;
        Py_XDECREF(made); /* the dict holds it */
        known = bad ? NULL : made;
        if (bad) {
            Py_DECREF(ext);
            return NULL;
        }
    }
    Py_DECREF(ext);
    if (!PyTuple_Check(known) || PyTuple_GET_SIZE(known) != 2) return NULL; /* None: not settled this way */
    long long max_size = PyLong_AsLongLong(PyTuple_GET_ITEM(known, 1));
    if (max_size == -1 && PyErr_Occurred()) return NULL;
    if (size > max_size) return NULL;
    PyObject *bytes = PyBytes_FromStringAndSize((const char *)data, (Py_ssize_t)size);
    if (bytes == NULL) return NULL;
    PyObject *hits = PyObject_CallFunctionObjArgs(search, bytes, keywords, Py_True, NULL);
    Py_DECREF(bytes);
    if (hits == NULL) {
        PyErr_Clear(); /* the scanner's scan_whole meets the same failure and reports it */
        return NULL;
    }
    Py_ssize_t found = PyObject_Length(hits);
    Py_DECREF(hits);
    if (found != 0) {
        PyErr_Clear();
        return NULL;
    }
    return PyTuple_GET_ITEM(known, 0);
}

static int record(PyObject *entries, PyObject *entry_type, PyObject *path, PyObject *kind, PyObject *size,
                  PyObject *mode, PyObject *link, PyObject *layer_index, PyObject *layer_digest) {
    PyObject *argv[7] = {path, kind, size, mode, link, layer_index, layer_digest};
    PyObject *entry = PyObject_Vectorcall(entry_type, argv, 7, NULL);
    if (entry == NULL) return -1;
    int r = PyDict_SetItem(entries, path, entry);
    Py_DECREF(entry);
    return r;
}

/* The rule the matcher's shape cache gives path (RuleMatcher.shapes; borrowed: a rule or None), as
 * RuleMatcher.match decides it; NULL with no error when the cache does not decide it (match does). */
static PyObject *shape_rule(PyObject *shapes, PyObject *path) {
    Py_ssize_t prefix_len;
    PyObject *prefixes, *suffixes, *infixes, *by_shape, *undecided;
    if (!PyArg_ParseTuple(shapes, "nO!O!O!O!O", &prefix_len, &PyTuple_Type, &prefixes, &PyTuple_Type, &suffixes,
                          &PyTuple_Type, &infixes, &PyDict_Type, &by_shape, &undecided))
        return NULL;
    Py_ssize_t len = PyUnicode_GET_LENGTH(path);
    Py_ssize_t slash = PyUnicode_FindChar(path, '/', 0, len, -1);
    if (slash <= 0 || slash == len - 1) return NULL; /* (-2, an error, is left set) */
    Py_ssize_t b = slash + 1;
    if (len - b >= prefix_len) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(prefixes); i++) {
            Py_ssize_t r = PyUnicode_Tailmatch(path, PyTuple_GET_ITEM(prefixes, i), b, b + prefix_len, -1);
            if (r != 0) return NULL;
        }
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(suffixes); i++) {
        if (PyUnicode_Tailmatch(path, PyTuple_GET_ITEM(suffixes, i), b, len, 1) != 0) return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(infixes); i++) {
        if (PyUnicode_Find(path, PyTuple_GET_ITEM(infixes, i), b, len, 1) != -1) return NULL;
    }
    Py_ssize_t dot = PyUnicode_FindChar(path, '.', b, len, -1);
    Py_ssize_t first = PyUnicode_FindChar(path, '/', 0, len, 1);
    if (dot == -2 || first < 0) return NULL;
    PyObject *top = PyUnicode_Substring(path, 0, first);
    PyObject *ext = dot >= 0 ? PyUnicode_Substring(path, dot, len) : Py_NewRef(Py_None);
    PyObject *key = top && ext ? PyTuple_Pack(2, top, ext) : NULL;
    Py_XDECREF(top);
    Py_XDECREF(ext);
    if (key == NULL) return NULL;
    PyObject *found = PyDict_GetItemWithError(by_shape, key); /* borrowed */
    Py_DECREF(key);
    return found == undecided ? NULL : found;
}

typedef struct {
    PyObject *entries, *scans, *match, *shapes, *settled, *entry_type, *file, *directory, *symlink, *layer_index,
        *layer_digest;
    Py_ssize_t max_read;
    const unsigned char *buf;
    long long base, end;
} Take;

#define TAKEN 1
#define STOP 0
#define FAILED -1

/* One member: TAKEN, STOP (the reader takes it in Python) or FAILED (an error is set). */
static int take_one(const Take *c, PyObject *item) {
    if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 7) return STOP;
    PyObject *name = PyTuple_GET_ITEM(item, 0), *path = PyTuple_GET_ITEM(item, 1), *type = PyTuple_GET_ITEM(item, 2);
    PyObject *size_obj = PyTuple_GET_ITEM(item, 3), *mode = PyTuple_GET_ITEM(item, 4), *link = PyTuple_GET_ITEM(item, 5);
    if (!PyUnicode_Check(name) || !PyUnicode_Check(path) || !PyUnicode_Check(type) || PyUnicode_GET_LENGTH(type) != 1)
        return STOP;
    long long size = PyLong_AsLongLong(size_obj), offset = PyLong_AsLongLong(PyTuple_GET_ITEM(item, 6));
    if (PyErr_Occurred()) {
        PyErr_Clear();
        return STOP;
    }
    if (size < 0 || offset < 0 || offset > c->end || PyUnicode_GET_LENGTH(path) == 0) return STOP;
    long long start = offset + BLOCK;
    if (start < c->base || start > c->end - size) return STOP; /* not whole in the window */
    if (PyUnicode_GET_LENGTH(name) > 0 && PyUnicode_READ_CHAR(name, 0) == '/') return STOP;
    Py_ssize_t wh = PyUnicode_Find(path, wh_marker, 0, PyUnicode_GET_LENGTH(path), 1);
    if (wh == -2) return FAILED;
    if (wh >= 0) return STOP;
    int seen = PyDict_Contains(c->entries, path);
    if (seen != 0) return seen < 0 ? FAILED : STOP;
    Py_UCS4 t = PyUnicode_READ_CHAR(type, 0);
    if (t == '2') /* a symlink: an entry whatever its rule, resolved later in the merged view */
        return record(c->entries, c->entry_type, path, c->symlink, size_obj, mode, link, c->layer_index,
                      c->layer_digest) < 0 ? FAILED : TAKEN;
    if (t != '0' && t != '5') return STOP;
    PyObject *rule = c->shapes != Py_None ? shape_rule(c->shapes, path) : NULL;
    if (rule != NULL) {
        Py_INCREF(rule);
    } else {
        if (PyErr_Occurred()) return FAILED;
        rule = PyObject_CallOneArg(c->match, path);
        if (rule == NULL) return FAILED;
    }
    if (rule == Py_None) {
        Py_DECREF(rule);
        return TAKEN; /* no rule wants it */
    }
    if (t == '5') {
        Py_DECREF(rule);
        return record(c->entries, c->entry_type, path, c->directory, size_obj, mode, Py_None, c->layer_index,
                      c->layer_digest) < 0 ? FAILED : TAKEN;
    }
    PyObject *policy = policy_of(c->settled, rule); /* borrowed: the list holds the rule and its policy */
    Py_DECREF(rule);
    if (policy == NULL || size > c->max_read) return STOP;
    PyObject *result = settle(policy, path, c->buf + (start - c->base), size);
    if (result == NULL) return PyErr_Occurred() ? FAILED : STOP;
    Py_INCREF(result); /* held across the calls below, which may run Python */
    int bad = record(c->entries, c->entry_type, path, c->file, size_obj, mode, Py_None, c->layer_index,
                     c->layer_digest) < 0 || PyDict_SetItem(c->scans, path, result) < 0;
    Py_DECREF(result);
    return bad ? FAILED : TAKEN;
}

static PyObject *take(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *items, *window, *ctx;
    Py_ssize_t first;
    Take c;
    if (!PyArg_ParseTuple(args, "O!nOLO!", &PyList_Type, &items, &first, &window, &c.base, &PyTuple_Type, &ctx))
        return NULL;
    if (!PyArg_ParseTuple(ctx, "O!O!OOO!OUUUOOn", &PyDict_Type, &c.entries, &PyDict_Type, &c.scans, &c.match,
                          &c.shapes, &PyList_Type, &c.settled, &c.entry_type, &c.file, &c.directory, &c.symlink,
                          &c.layer_index, &c.layer_digest, &c.max_read))
        return NULL;
    if (wh_marker == NULL && (wh_marker = PyUnicode_InternFromString(".wh.")) == NULL) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(window, &view, PyBUF_SIMPLE) < 0) return NULL;
    c.buf = view.buf;
    c.end = c.base + (long long)view.len;
    Py_ssize_t taken = 0;
    int status = TAKEN;
    for (Py_ssize_t i = first < 0 ? PY_SSIZE_T_MAX : first; i < PyList_GET_SIZE(items); i++) {
        PyObject *item = PyList_GET_ITEM(items, i);
        Py_INCREF(item); /* the callbacks run Python: the member stays alive whatever they do */
        status = take_one(&c, item);
        Py_DECREF(item);
        if (status != TAKEN) break;
        taken++;
    }
    PyBuffer_Release(&view);
    return status == FAILED ? NULL : PyLong_FromSsize_t(taken);
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, "Parse the plain tar headers in a window; return the members rules may want."},
    {"take", take, METH_VARARGS, "Record the window's members the reader takes its usual way; return how many."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_tarscan", NULL, -1, methods};

PyMODINIT_FUNC PyInit__tarscan(void) { return PyModule_Create(&module); }
