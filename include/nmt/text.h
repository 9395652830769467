/* Reading text files line by line (plain or gzip), tokenizing and
 * detokenizing. */
#ifndef NMT_TEXT_H
#define NMT_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* A line reader over a plain or gzip file, told apart by the gzip magic bytes
 * (1f 8b), never by the name. "-" reads standard input. It streams: only the
 * current line is held. Each line is checked: valid UTF-8, no NUL byte; "\n"
 * and a "\r" before it are removed. A truncated or corrupt gzip stream is an
 * error. Messages name the file and the 1-based line number. */
typedef struct nmt_reader nmt_reader;

int nmt_reader_open(nmt_reader **out, const char *path);
/* Reads the next line into *line (NUL-terminated, valid until the next call)
 * and its length into *len. Returns 1 for a line, 0 at the end, or a negative
 * NMT_ERR_* code. */
int nmt_reader_next(nmt_reader *r, const char **line, size_t *len);
/* The 1-based number of the last line returned. */
size_t nmt_reader_lineno(const nmt_reader *r);
const char *nmt_reader_path(const nmt_reader *r);
void nmt_reader_close(nmt_reader *r);

/* Tokens of one line, reused from line to line to avoid allocation. The token
 * strings are NUL-terminated and live in one buffer owned by the struct. */
typedef struct nmt_tokens {
    size_t n;          /* number of tokens */
    char **tok;        /* [n] pointers into buf */
    size_t *len;       /* [n] byte lengths */
    /* storage, grown as needed */
    char *buf;
    size_t buf_cap, cap;
} nmt_tokens;

/* Splits UTF-8 text on whitespace and splits punctuation (ASCII and Unicode,
 * e.g. „ “ « » – …) off words; numbers such as 3.5, 1,000 and 10:30 stay
 * whole, as do hyphenated words (T-shirt) and words with an inner apostrophe
 * (l'homme, O'Brien). English clitics are split off Penn Treebank style:
 * "John's" -> "John 's", "don't" -> "do n't" ('s 're 've 'll 'd 'm n't), and
 * the detokenizer joins them back. A run of one punctuation mark ("...") is
 * one token. With `lowercase`, ASCII, Latin-1 and Latin Extended-A letters
 * are lowercased (Ä→ä, É→é, Ő→ő, İ→i, Ÿ→ÿ); other scripts are left alone.
 * The text should be valid UTF-8 (the reader checks this; invalid bytes are
 * kept as word characters). Returns NMT_OK or NMT_ERR_NOMEM. */
int nmt_tokenize(nmt_tokens *out, const char *text, size_t len, int lowercase);
void nmt_tokens_free(nmt_tokens *t);
/* Appends a copy of s[0..len) as one more token (set n = 0 to start
 * afresh). NMT_OK or NMT_ERR_NOMEM. */
int nmt_tokens_push(nmt_tokens *t, const char *s, size_t len);

/* Words as word links count them (guided alignment; docs/DESIGN.md,
 * "Guided alignment"): the maximal runs of characters of text[0..len) that
 * are not whitespace, the tokenizer's (nmt_utf8_is_token_space). */
size_t nmt_count_words(const char *text, size_t len);
/* The word (from 0) of each of the n tokens that nmt_tokenize made of
 * text[0..len) with `lowercase`, into word [n]: the word it was cut from,
 * found by cutting each word alone (scratch: any tokens, reused). NMT_OK,
 * NMT_ERR_NOMEM, or NMT_ERR_FORMAT when the words' tokens are not n. */
int nmt_token_words(int32_t *word, size_t n, const char *text, size_t len, int lowercase,
                    nmt_tokens *scratch);
/* The word of each of n pieces whose spans of text[0..len) start at byte
 * begin[k], into word [n]: the word that holds the first character at or
 * after begin[k] that is not whitespace, or, when only whitespace is left,
 * the last word (-1 in a line of no word). */
void nmt_span_words(int32_t *word, const int32_t *begin, size_t n, const char *text,
                    size_t len);

/* The tokenizer's lowercasing (see nmt_tokenize) of a whole text:
 * writes text[0..len) lowercased and NUL-terminated into out, which needs
 * room for len + 1 bytes (lowercasing never makes text longer), and returns
 * the new length. */
size_t nmt_lowercase(char *out, const char *text, size_t len);

/* Joins tokens the way a person writes: no space before . , ! ? ; : ) ] } %
 * … and closing quotes, none after ( [ { ¿ ¡ $ # and opening quotes („ « “),
 * none around /, 's n't etc. attached. Straight quotes " and ' alternate
 * between opening and closing; a ' with no partner after it closes (the
 * dogs' bowls, 4'). On the English Multi30k references
 * nmt_detokenize(nmt_tokenize(line)) gives back 99.9% of the lines exactly.
 * Returns a malloc'ed string (NULL on allocation failure). */
char *nmt_detokenize(const char *const *tokens, size_t n);

/* nmt_detokenize with the first k tokens written as `head`, byte for byte,
 * in their place (a target prefix as its writer wrote it); the tokens after
 * them are joined to it as nmt_detokenize joins them to those k tokens. k 0
 * or head NULL: nmt_detokenize. */
char *nmt_detokenize_head(const char *const *tokens, size_t n, size_t k, const char *head);

/* Reads the lines of a text file (plain or gzip) into a malloc'ed array of
 * malloc'ed strings. */
int nmt_read_lines(const char *path, char ***lines, size_t *n);
void nmt_free_lines(char **lines, size_t n);

#endif
