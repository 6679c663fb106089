/* The text-facts scan's keyword search in C: which lines of a text hold one of a few keywords.
 *
 * imagelint/facts/gpuindex.py is the reference (``hit_lines``'s Python path, one str.find pass
 * per keyword): this is the same search in one pass over the text. Each keyword is looked for at
 * its anchor (its least common byte), so the loop stops only where an anchor character is, and
 * there tries the keywords anchored at that character. In one-byte text (str or bytes: nearly every
 * source file) the anchors are found 16 bytes at a time with SSE2 (one compare per distinct anchor,
 * a fraction of the instructions a byte-by-byte table walk spends), and the pair of characters
 * at an anchor (the anchor and the next one) is looked up in a one-bit-per-pair table before any
 * keyword is compared. Where the CPU has SSSE3 (checked at import), both characters of the pair are
 * sifted 16 positions at a time instead (``next_pair_block``: four byte shuffles a block, whatever the
 * number of anchors): in source text an anchor character is ~1 byte in 28 but an anchor pair ~1 in
 * 250, and the scalar checks at the rest were most of the search's time. Strings of every kind (1, 2 or 4 bytes a character) are searched in place.
 * Every read is bounds-checked against the text; tests/facts/test_textscan.py compares it with the
 * Python path on random texts and keyword sets.
 *
 * lines(text, keywords, first=False) -> [index, start, end, index, start, end, ...]
 *   text      a str whose line breaks are all "\n" (gpuindex.newline_text), or bytes: searched as
 *             one-byte characters (the keywords are ASCII, and in UTF-8 an ASCII byte is always that
 *             character, so a file holds a keyword exactly when its decoded text does)
 *   keywords  a tuple of 1 to 64 non-empty ASCII str
 *   index     the line's number counted from 0 (the "\n"s before it); start, end: where the
 *             line starts in text and where it ends (its "\n", or the end of text), once per line
 *   first     stop at the first hit line (whether a text holds a keyword at all: one triple at most)
 *
 * newlines(data) -> the number of "\n" in data, or -1 when data decoded (UTF-8, invalid bytes
 *             replaced) holds another line break str.splitlines() knows ("\r", "\x0b", "\x0c",
 *             "\x1c"-"\x1e", U+0085, U+2028, U+2029): bytes whose lines can be cut at "\n" alone,
 *             and how many there are, in one pass (gpuindex.has_other_breaks is the reference).
 *             U+0085, U+2028 and U+2029 are the bytes C2 85, E2 80 A8 and E2 80 A9: C2 and E2 are
 *             lead bytes, which always start a sequence, so these bytes are there exactly when the
 *             characters are in the decoded text.
 *
 * find(data, needle, start, anchor) -> the first index >= start where needle is in data, or -1
 *   data      a bytes-like object (the fatbin search's chunks of shared libraries)
 *   needle    non-empty bytes; anchor: the index in needle of its least common byte in data, which
 *             memchr looks for, so the search runs at memchr's speed and stops only where that byte
 *             is (bytes.find's skip table is defeated by the "\0"s of a needle in binary data).
 *   The result is bytes.find's (fatbin.py's fallback); tests/facts/test_fatbin.py compares them.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
/* SSSE3's byte shuffle, used only in a function built for it and only where the CPU has it (checked
 * at import): the build itself assumes no more than SSE2. */
#include <tmmintrin.h>
#define PAIR_FILTER 1
#endif

#define MAX_KEYWORDS 64

/* Printable ASCII from most to least common in source text (Python and C++ sources): each keyword
 * is looked for at its least common byte, so the loop stops at few positions. Only speed depends
 * on this order, never a result: a byte not listed counts as rarest. */
static const char COMMON[] =
    " etnarsoi_lcdup:mf,h)(.gTyb/\"=vwAkSx>OR1ENC#I0;-&<2L[]{}zFP`*D'HB643MVGq!8U5K+jY\\W7@9|~X?%QZJ^";

/* commonness of each byte (0: not listed, the rarest), filled once at module init. */
static unsigned char RANK[256];

static void fill_ranks(void) {
    for (size_t j = 0; j + 1 < sizeof COMMON; j++) RANK[(unsigned char)COMMON[j]] = (unsigned char)(sizeof COMMON - j);
}

/* The hit lines found so far, three numbers each, in memory of its own: the search runs without
 * the GIL (see ``lines``) and the list is built after it. */
typedef struct {
    Py_ssize_t *values;
    Py_ssize_t count, room;
} Hits;

static int append_triple(Hits *out, Py_ssize_t a, Py_ssize_t b, Py_ssize_t c) {
    if (out->count + 3 > out->room) {
        Py_ssize_t room = out->room ? out->room * 2 : 48;
        Py_ssize_t *values = PyMem_RawRealloc(out->values, (size_t)room * sizeof(Py_ssize_t));
        if (values == NULL) return -1;
        out->values = values;
        out->room = room;
    }
    out->values[out->count++] = a;
    out->values[out->count++] = b;
    out->values[out->count++] = c;
    return 0;
}

typedef struct {
    Py_ssize_t count;
    const char *text[MAX_KEYWORDS];
    Py_ssize_t length[MAX_KEYWORDS], anchor[MAX_KEYWORDS];
    unsigned long long at[256]; /* the keywords whose anchor is this character */
    int anchors;                /* distinct anchor characters, listed in ``anchor_chars`` */
    unsigned char anchor_chars[MAX_KEYWORDS];
    /* One bit per pair of one-byte characters: some keyword holds the pair at its anchor (the anchor
     * and the character after it). Set only when every keyword has a character after its anchor. */
    int pairs_ok;
    unsigned long long pairs[65536 / 64];
    /* The same pairs as nibble tables for the SSSE3 filter (``next_pair_block``), set with the pairs:
     * bit b of lo1[c & 15] & hi1[c >> 4] says c is the anchor of a pair of bucket b, and lo2/hi2 say
     * the same of the character after it. An anchor character's pairs share its bucket (one of 8). */
    unsigned char lo1[16], hi1[16], lo2[16], hi2[16];
} Keywords;

#define MAX_VECTOR_ANCHORS 16 /* more distinct anchors than this: one character at a time */

/* Does a keyword anchored at s[j] (an anchor character) lie at j? One-byte text. */
static int keyword_at(const Py_UCS1 *s, Py_ssize_t n, Py_ssize_t j, const Keywords *kw) {
    if (kw->pairs_ok) {
        /* The anchor and the character after it, one table lookup: most anchors are not followed as
         * in a keyword (and no keyword's anchor is a text's last character). */
        if (j + 1 >= n) return 0;
        unsigned pair = (unsigned)s[j] << 8 | (unsigned)s[j + 1];
        if (!(kw->pairs[pair >> 6] >> (pair & 63) & 1)) return 0;
    }
    unsigned long long candidates = kw->at[s[j]];
    while (candidates) {
        int k = __builtin_ctzll(candidates);
        candidates &= candidates - 1;
        Py_ssize_t start = j - kw->anchor[k];
        if (start < 0 || n - start < kw->length[k]) continue;
        if (memcmp(s + start, kw->text[k], (size_t)kw->length[k]) == 0) return 1;
    }
    return 0;
}

#if defined(__SSE2__)
/* The 16 per-byte counts of ``acc`` added up. (Counting bytes by subtracting each compare's -1 from
 * per-byte counters and adding those up at most every 255 blocks costs two instructions a block;
 * a popcount of each block's mask is a library call where the build may not assume the instruction.) */
static Py_ssize_t sum_counts(__m128i acc) {
    __m128i sums = _mm_sad_epu8(acc, _mm_setzero_si128());
    return _mm_cvtsi128_si32(sums) + _mm_cvtsi128_si32(_mm_srli_si128(sums, 8));
}
#endif

/* The "\n"s in s[from:to]. One-byte text. */
static Py_ssize_t count_newlines(const Py_UCS1 *s, Py_ssize_t from, Py_ssize_t to) {
    Py_ssize_t count = 0, j = from;
#if defined(__SSE2__)
    const __m128i nl = _mm_set1_epi8('\n');
    while (to - j >= 16) {
        __m128i acc = _mm_setzero_si128();
        for (int b = 0; b < 255 && to - j >= 16; b++, j += 16)
            acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(s + j)), nl));
        count += sum_counts(acc);
    }
#endif
    for (; j < to; j++) count += s[j] == '\n';
    return count;
}

#if defined(PAIR_FILTER)
/* Whether the CPU has SSSE3 (set at import; a test may turn the filter off to compare both paths). */
static int pair_filter_on;

/* From s[i], the first block of 16 positions where some position j may start a keyword's anchor
 * pair (s[j], s[j + 1]): its start, and in ``mask`` a bit for each such j (bit 0: the block's first).
 * Two shuffles a character look up the bucket bits of the anchor and of the character after it, so
 * a block costs the same whatever the number of anchors, and a position comes back only when the
 * pair may be one a keyword holds (most anchor characters of source text are not followed as in
 * one), never missing one that is. Reads s[i:i + 17] per block: stops (mask 0) when fewer remain. */
__attribute__((target("ssse3"))) static Py_ssize_t next_pair_block(const Py_UCS1 *s, Py_ssize_t i, Py_ssize_t n,
                                                                   const Keywords *kw, unsigned *mask) {
    const __m128i nibble = _mm_set1_epi8(0x0f), zero = _mm_setzero_si128();
    const __m128i lo1 = _mm_loadu_si128((const __m128i *)kw->lo1), hi1 = _mm_loadu_si128((const __m128i *)kw->hi1);
    const __m128i lo2 = _mm_loadu_si128((const __m128i *)kw->lo2), hi2 = _mm_loadu_si128((const __m128i *)kw->hi2);
    for (; n - i >= 17; i += 16) {
        __m128i v0 = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i v1 = _mm_loadu_si128((const __m128i *)(s + i + 1));
        /* A byte >= 0x80 has a high nibble of 8-15, whose table entries are 0 (keywords are ASCII). */
        __m128i first = _mm_and_si128(_mm_shuffle_epi8(lo1, _mm_and_si128(v0, nibble)),
                                      _mm_shuffle_epi8(hi1, _mm_and_si128(_mm_srli_epi16(v0, 4), nibble)));
        __m128i second = _mm_and_si128(_mm_shuffle_epi8(lo2, _mm_and_si128(v1, nibble)),
                                       _mm_shuffle_epi8(hi2, _mm_and_si128(_mm_srli_epi16(v1, 4), nibble)));
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(first, second), zero)) ^ 0xFFFFu;
        if (m) {
            *mask = m;
            return i;
        }
    }
    *mask = 0;
    return i;
}
#endif

/* The search over one-byte text (str of code points < 256, or bytes): 16 characters at a time, the
 * anchors among them found by one compare per distinct anchor, then each tried in order. */
static int search_one_byte(const Py_UCS1 *s, Py_ssize_t n, const Keywords *kw, int first_only, Hits *out) {
    /* ``counted``: a line start whose line number ``index`` is known. */
    Py_ssize_t index = 0, counted = 0, i = 0;
#if defined(__SSE2__)
    const int vector = kw->anchors <= MAX_VECTOR_ANCHORS;
    __m128i want[MAX_VECTOR_ANCHORS];
    for (int k = 0; vector && k < kw->anchors; k++) want[k] = _mm_set1_epi8((char)kw->anchor_chars[k]);
#endif
    while (i < n) {
        Py_ssize_t block = 1; /* the characters this step looks at: s[i:i + block] */
        unsigned mask;
#if defined(PAIR_FILTER)
        if (pair_filter_on && kw->pairs_ok && n - i >= 17) {
            i = next_pair_block(s, i, n, kw, &mask);
            if (!mask) continue; /* fewer than 17 characters left: the paths below take them */
            block = 16;
        } else
#endif
#if defined(__SSE2__)
        if (vector && n - i >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
            __m128i hit = _mm_cmpeq_epi8(v, want[0]);
            for (int k = 1; k < kw->anchors; k++) hit = _mm_or_si128(hit, _mm_cmpeq_epi8(v, want[k]));
            mask = (unsigned)_mm_movemask_epi8(hit);
            block = 16;
        } else
#endif
        {
            mask = kw->at[s[i]] ? 1u : 0u;
        }
        Py_ssize_t found = -1;
        while (mask) {
            Py_ssize_t j = i + __builtin_ctz(mask);
            mask &= mask - 1;
            if (keyword_at(s, n, j, kw)) {
                found = j;
                break;
            }
        }
        if (found < 0) {
            i += block;
            continue;
        }
        /* A keyword holds no "\n": its line starts after the last "\n" before it. */
        Py_ssize_t line_start = found;
        while (line_start > counted && s[line_start - 1] != '\n') line_start--;
        index += count_newlines(s, counted, line_start);
        counted = line_start;
        const Py_UCS1 *nl = memchr(s + found, '\n', (size_t)(n - found));
        Py_ssize_t line_end = nl ? nl - s : n;
        if (append_triple(out, index, line_start, line_end) < 0) return -1;
        if (first_only) break;
        i = line_end + 1; /* the next line: this one is handed back once */
    }
    return 0;
}

/* The search over two- and four-byte strings (keywords are ASCII, so a wider character never
 * starts a match), one character at a time. Appends [index, start, end] per hit line to ``out``; -1 on error. */
#define DEFINE_SEARCH(NAME, CHAR)                                                                \
    static int NAME(const CHAR *s, Py_ssize_t n, const Keywords *kw, int first_only, Hits *out) { \
        /* ``counted``: a line start whose line number ``index`` is known. */                     \
        Py_ssize_t index = 0, counted = 0, i = 0;                                                  \
        while (i < n) {                                                                            \
            unsigned long long candidates = s[i] < 256 ? kw->at[s[i]] : 0;                         \
            if (!candidates) {                                                                     \
                i++;                                                                               \
                continue;                                                                          \
            }                                                                                      \
            int hit = 0;                                                                           \
            while (candidates && !hit) {                                                           \
                int k = __builtin_ctzll(candidates);                                               \
                candidates &= candidates - 1;                                                      \
                Py_ssize_t start = i - kw->anchor[k], j = 0;                                       \
                if (start < 0 || n - start < kw->length[k]) continue;                              \
                while (j < kw->length[k] && s[start + j] == (CHAR)(unsigned char)kw->text[k][j]) j++; \
                hit = j == kw->length[k];                                                          \
            }                                                                                      \
            if (!hit) {                                                                            \
                i++;                                                                               \
                continue;                                                                          \
            }                                                                                      \
            /* A keyword holds no "\n": its line starts after the last "\n" before i. */          \
            Py_ssize_t line_start = i, end = i;                                                    \
            while (line_start > counted && s[line_start - 1] != '\n') line_start--;                \
            for (Py_ssize_t j = counted; j < line_start; j++) index += s[j] == '\n';               \
            counted = line_start;                                                                  \
            while (end < n && s[end] != '\n') end++;                                               \
            if (append_triple(out, index, line_start, end) < 0) return -1;                         \
            if (first_only) break;                                                                 \
            i = end + 1; /* the next line: this one is handed back once */                         \
        }                                                                                          \
        return 0;                                                                                  \
    }

DEFINE_SEARCH(search_ucs2, Py_UCS2)
DEFINE_SEARCH(search_ucs4, Py_UCS4)

/* The keyword tables of a tuple of keywords, built in ``kw``; -1 with an exception set when the
 * tuple is not 1 to 64 non-empty ASCII str. */
static int build_keywords(PyObject *keywords, Keywords *kw) {
    kw->count = PyTuple_GET_SIZE(keywords);
    if (kw->count < 1 || kw->count > MAX_KEYWORDS) {
        PyErr_SetString(PyExc_ValueError, "between 1 and 64 keywords");
        return -1;
    }
    memset(kw->at, 0, sizeof kw->at);
    memset(kw->pairs, 0, sizeof kw->pairs);
    memset(kw->lo1, 0, sizeof kw->lo1);
    memset(kw->hi1, 0, sizeof kw->hi1);
    memset(kw->lo2, 0, sizeof kw->lo2);
    memset(kw->hi2, 0, sizeof kw->hi2);
    kw->pairs_ok = 1;
    kw->anchors = 0;
    for (Py_ssize_t k = 0; k < kw->count; k++) {
        PyObject *item = PyTuple_GET_ITEM(keywords, k);
        if (!PyUnicode_Check(item) || PyUnicode_READY(item) < 0 || !PyUnicode_IS_ASCII(item) ||
            PyUnicode_GET_LENGTH(item) == 0) {
            PyErr_SetString(PyExc_ValueError, "keywords must be non-empty ASCII str");
            return -1;
        }
        const char *t = (const char *)PyUnicode_1BYTE_DATA(item);
        Py_ssize_t length = PyUnicode_GET_LENGTH(item), anchor = 0;
        for (Py_ssize_t j = 1; j < length; j++)
            if (RANK[(unsigned char)t[j]] < RANK[(unsigned char)t[anchor]]) anchor = j;
        kw->text[k] = t;
        kw->length[k] = length;
        kw->anchor[k] = anchor;
        if (!kw->at[(unsigned char)t[anchor]]) kw->anchor_chars[kw->anchors++] = (unsigned char)t[anchor];
        kw->at[(unsigned char)t[anchor]] |= 1ULL << k;
        if (anchor + 1 < length) {
            unsigned char a = (unsigned char)t[anchor], b = (unsigned char)t[anchor + 1];
            unsigned pair = (unsigned)a << 8 | b;
            kw->pairs[pair >> 6] |= 1ULL << (pair & 63);
            int slot = 0;
            while (kw->anchor_chars[slot] != a) slot++; /* (listed above) */
            unsigned char bucket = (unsigned char)(1u << (slot & 7));
            kw->lo1[a & 15] |= bucket;
            kw->hi1[a >> 4] |= bucket;
            kw->lo2[b & 15] |= bucket;
            kw->hi2[b >> 4] |= bucket;
        } else {
            kw->pairs_ok = 0; /* a keyword ending at its anchor: no pair to look for */
        }
    }
    return 0;
}

/* The tables of the few keyword tuples a process searches with (gpuindex.KEYWORDS, once per file of
 * an image: ~12 KB of tables rebuilt per call was a good part of a small file's search). An entry is
 * written once, under the GIL, before any search reads it, and never changed or freed after: a
 * search running without the GIL may read it while another call fills a free entry. The tuple is
 * held, so its identity (and its str's data, which the tables point into) cannot be reused. Tuples
 * past the first few are built per call, on the stack, as before. */
#define KEYWORD_CACHE 4
static PyObject *cached_tuples[KEYWORD_CACHE];
static Keywords *cached_tables[KEYWORD_CACHE];

static const Keywords *cached_keywords(PyObject *keywords) {
    for (int i = 0; i < KEYWORD_CACHE; i++) {
        if (cached_tuples[i] == keywords) return cached_tables[i];
        if (cached_tuples[i] == NULL) {
            Keywords *kw = PyMem_RawMalloc(sizeof *kw);
            if (kw == NULL) return NULL;
            if (build_keywords(keywords, kw) < 0) {
                PyMem_RawFree(kw);
                return NULL;
            }
            Py_INCREF(keywords);
            cached_tables[i] = kw;
            cached_tuples[i] = keywords;
            return kw;
        }
    }
    return NULL;
}

/* Texts shorter than this are searched holding the GIL: their search takes microseconds, less than
 * handing the GIL to the other layer worker and waiting to get it back. */
#define RELEASE_GIL_FROM 16384

static PyObject *lines(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text, *keywords;
    int first_only = 0;
    if (!PyArg_ParseTuple(args, "OO!|p", &text, &PyTuple_Type, &keywords, &first_only)) return NULL;
    if (!PyBytes_Check(text) && !PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "text must be str or bytes");
        return NULL;
    }
    if (PyUnicode_Check(text) && PyUnicode_READY(text) < 0) return NULL;
    Keywords own;
    const Keywords *kw = cached_keywords(keywords);
    if (kw == NULL) {
        if (PyErr_Occurred()) return NULL;
        if (build_keywords(keywords, &own) < 0) return NULL;
        kw = &own;
    }
    /* bytes and str are immutable and the caller holds them: their data stays put without the GIL. */
    Py_ssize_t n;
    int kind;
    const void *data;
    if (PyBytes_Check(text)) {
        n = PyBytes_GET_SIZE(text);
        kind = PyUnicode_1BYTE_KIND;
        data = PyBytes_AS_STRING(text);
    } else {
        n = PyUnicode_GET_LENGTH(text);
        kind = PyUnicode_KIND(text);
        data = PyUnicode_DATA(text);
    }
    Hits hits = {NULL, 0, 0};
    int status;
    /* The search touches no Python object (the str is immutable and held by the caller), so a long
     * one runs without the GIL: the other layer worker, inflating, takes the GIL back at once instead
     * of waiting out the interpreter's switch interval while this thread runs Python around it. A
     * short one (RELEASE_GIL_FROM) keeps it. */
    PyThreadState *released = n >= RELEASE_GIL_FROM ? PyEval_SaveThread() : NULL;
    switch (kind) {
    case PyUnicode_1BYTE_KIND:
        status = search_one_byte(data, n, kw, first_only, &hits);
        break;
    case PyUnicode_2BYTE_KIND:
        status = search_ucs2(data, n, kw, first_only, &hits);
        break;
    default:
        status = search_ucs4(data, n, kw, first_only, &hits);
        break;
    }
    if (released != NULL) PyEval_RestoreThread(released);
    if (status < 0) {
        PyMem_RawFree(hits.values);
        return PyErr_NoMemory();
    }
    PyObject *out = PyList_New(hits.count);
    if (out != NULL) {
        for (Py_ssize_t i = 0; i < hits.count; i++) {
            PyObject *v = PyLong_FromSsize_t(hits.values[i]);
            if (v == NULL) {
                Py_CLEAR(out);
                break;
            }
            PyList_SET_ITEM(out, i, v);
        }
    }
    PyMem_RawFree(hits.values);
    return out;
}

/* Does a line break other than "\n" start at s[j]? */
static int other_break_at(const unsigned char *s, Py_ssize_t n, Py_ssize_t j) {
    unsigned char c = s[j];
    if (c == 0xC2) return j + 1 < n && s[j + 1] == 0x85;
    if (c == 0xE2) return j + 2 < n && s[j + 1] == 0x80 && (s[j + 2] == 0xA8 || s[j + 2] == 0xA9);
    return c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E;
}

static PyObject *newlines(PyObject *Py_UNUSED(self), PyObject *arg) {
    if (!PyBytes_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "data must be bytes");
        return NULL;
    }
    const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(arg);
    Py_ssize_t n = PyBytes_GET_SIZE(arg), count = 0, j = 0;
#if defined(__SSE2__)
    /* 16 bytes at a time: the "\n"s counted, and any byte a break other than "\n" starts with
     * found by one compare per such byte (a C2 or E2 that starts no break, in text that is not
     * ASCII, is looked at and passed over). */
    const __m128i nl = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r'), vt = _mm_set1_epi8(0x0B),
                  ff = _mm_set1_epi8(0x0C), fs = _mm_set1_epi8(0x1C), gs = _mm_set1_epi8(0x1D),
                  rs = _mm_set1_epi8(0x1E), c2 = _mm_set1_epi8((char)0xC2), e2 = _mm_set1_epi8((char)0xE2);
    __m128i acc = _mm_setzero_si128();
    for (int b = 0; n - j >= 16; j += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + j));
        acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(v, nl));
        if (++b == 255) {
            count += sum_counts(acc);
            acc = _mm_setzero_si128();
            b = 0;
        }
        __m128i other = _mm_or_si128(_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, vt)),
                                                  _mm_or_si128(_mm_cmpeq_epi8(v, ff), _mm_cmpeq_epi8(v, fs))),
                                     _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, gs), _mm_cmpeq_epi8(v, rs)),
                                                  _mm_or_si128(_mm_cmpeq_epi8(v, c2), _mm_cmpeq_epi8(v, e2))));
        unsigned mask = (unsigned)_mm_movemask_epi8(other);
        while (mask) {
            if (other_break_at(s, n, j + __builtin_ctz(mask))) return PyLong_FromLong(-1);
            mask &= mask - 1;
        }
    }
    count += sum_counts(acc);
#endif
    for (; j < n; j++) {
        if (s[j] == '\n') count++;
        else if (other_break_at(s, n, j)) return PyLong_FromLong(-1);
    }
    return PyLong_FromSsize_t(count);
}

static PyObject *find(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer data, needle;
    Py_ssize_t start, anchor;
    if (!PyArg_ParseTuple(args, "y*y*nn", &data, &needle, &start, &anchor)) return NULL;
    const unsigned char *s = data.buf, *t = needle.buf;
    Py_ssize_t n = data.len, m = needle.len, found = -1;
    if (m < 1 || anchor < 0 || anchor >= m) {
        PyBuffer_Release(&data);
        PyBuffer_Release(&needle);
        PyErr_SetString(PyExc_ValueError, "a non-empty needle and an anchor inside it");
        return NULL;
    }
    if (start < 0) start = 0;
    /* The anchor of a match at i is at i + anchor: look for it from start + anchor up to the last
     * place a whole needle still fits. */
    Py_ssize_t i = start + anchor, last = n - m + anchor;
    while (i <= last) {
        const unsigned char *at = memchr(s + i, t[anchor], (size_t)(last - i + 1));
        if (at == NULL) break;
        i = at - s;
        if (memcmp(s + i - anchor, t, (size_t)m) == 0) {
            found = i - anchor;
            break;
        }
        i++;
    }
    PyBuffer_Release(&data);
    PyBuffer_Release(&needle);
    return PyLong_FromSsize_t(found);
}

/* pair_filter() -> whether the SSSE3 pair filter is in use; pair_filter(False) turns it off, and
 * pair_filter(True) back on where the CPU has it (tests compare the search with and without it). */
static PyObject *pair_filter(PyObject *Py_UNUSED(self), PyObject *args) {
    int on = -1;
    if (!PyArg_ParseTuple(args, "|p", &on)) return NULL;
#if defined(PAIR_FILTER)
    if (on >= 0) pair_filter_on = on && __builtin_cpu_supports("ssse3");
    return PyBool_FromLong(pair_filter_on);
#else
    return PyBool_FromLong(0);
#endif
}

static PyMethodDef methods[] = {
    {"lines", lines, METH_VARARGS, "The lines of a text that hold one of the keywords: [index, start, end, ...]."},
    {"pair_filter", pair_filter, METH_VARARGS, "Whether the SSSE3 pair filter is in use; pair_filter(False) turns it off."},
    {"find", find, METH_VARARGS, "data.find(needle, start), memchr on needle[anchor]: the index or -1."},
    {"newlines", newlines, METH_O, "The number of \"\\n\" in bytes, or -1 when they hold another line break."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_hitscan", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__hitscan(void) {
    fill_ranks();
#if defined(PAIR_FILTER)
    __builtin_cpu_init();
    pair_filter_on = __builtin_cpu_supports("ssse3");
#endif
    return PyModule_Create(&module);
}
