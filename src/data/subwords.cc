// The C API of include/nmt/subwords.h over SentencePiece's C++ API: the
// only C++ in nmt. Every encoding, decoding and the learning itself are
// SentencePiece's, but for sampling: a unigram model with no normalization
// table, no user-defined pieces and no byte fallback (every model nmt
// learns) is sampled by nmt's own lattice (data/unigram_sampler.c), which
// draws what SentencePiece 0.1.97's SampleEncode draws, from the very
// generator it would use (SentencePiece's own, per thread), without its
// allocations; any other model is sampled by SentencePiece.
//
// No exception leaves this file: each entry point that can throw catches
// everything (caught() turns it into an NMT_ERR_* code and a message), and
// what it allocates is owned by RAII until it is handed to C, so that an
// exception thrown anywhere leaks nothing and closes nothing twice. Nothing
// prints: SentencePiece's own log is turned down to fatal errors.
//
// SentencePiece trusts the model it loads in one place: the normalization
// table (a double-array trie and the strings it points into) is walked with
// the offsets it holds, unchecked. A model file is hostile input here, so
// before SentencePiece sees a model, check_charsmap proves that no walk of
// its tables can leave them; that needs the table's bytes, found by reading
// the protobuf wire format directly (the generated classes are not part of
// the Debian package).
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <limits>
#include <memory>
#include <new>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

extern "C" {
#include "data/unigram_sampler.h"
#include "nmt/error.h"
#include "nmt/subwords.h"
#include "nmt/vocab.h"
}

#if NMT_SPM_GENERATOR
// The generator SentencePiece samples with (util.cc): one std::mt19937 per
// thread, made from SetRandomGeneratorSeed's seed when the thread first
// draws. Not in its public header, but exported by libsentencepiece; the
// build checks that it links (src/meson.build). Drawing from it, and not
// from a copy, keeps nmt's draws and SentencePiece's in one sequence.
namespace sentencepiece {
namespace random {
std::mt19937 *GetRandomGenerator();
}
}
#endif

namespace spm = sentencepiece;

namespace {
struct unigram_deleter {
    void operator()(nmt_unigram *u) const { nmt_unigram_free(u); }
};
} // namespace

struct nmt_subwords {
    spm::SentencePieceProcessor sp;
    std::string bytes;          // the serialized model
    std::string type;           // "unigram", "bpe", ...
    std::string normalization;  // the normalizer's name
    bool byte_fallback = false;
    // nmt's sampler of this model, when it reproduces SentencePiece's
    std::unique_ptr<nmt_unigram, unigram_deleter> sampler;
    bool native = true;         // sample with it (a switch for the tests)
};

namespace {

// What a model says about itself, read from its protobuf wire format.
struct model_facts {
    int model_type = 1;  // TrainerSpec.ModelType: 1 unigram (the default), 2 bpe, 3 word, 4 char
    bool byte_fallback = false;
    bool whitespace_suffix = false;
    std::string normalizer_name;
    // the pieces in id order, and the normalizer's whitespace flags and
    // whether it has a table, as nmt's sampler needs them
    std::vector<std::string> piece;
    std::vector<float> score;
    std::vector<int> piece_type;
    bool add_dummy_prefix = true, remove_extra_whitespaces = true, escape_whitespaces = true;
    bool normalizer_table = false;
    bool pieces_ok = true;
    // precompiled_charsmap of the normalizer and the denormalizer
    std::vector<std::pair<const unsigned char *, size_t>> charsmaps;
};

// ---- the protobuf wire format, just enough to find fields ----------------

struct wire {
    const unsigned char *p, *end;
};

struct field {
    uint64_t num;
    int type;                  // 0 varint, 1 fixed64, 2 bytes, 5 fixed32
    uint64_t value;            // type 0, and type 5's 32 bits
    const unsigned char *data; // type 2
    size_t len;
};

bool read_varint(wire &w, uint64_t &v)
{
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (w.p == w.end)
            return false;
        unsigned char b = *w.p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return true;
    }
    return false;
}

// 1: a field read; 0: the end; -1: malformed.
int next_field(wire &w, field &f)
{
    if (w.p == w.end)
        return 0;
    uint64_t key;
    if (!read_varint(w, key) || (key >> 3) == 0)
        return -1;
    f.num = key >> 3;
    f.type = (int)(key & 7);
    size_t left = (size_t)(w.end - w.p);
    switch (f.type) {
    case 0:
        return read_varint(w, f.value) ? 1 : -1;
    case 1:
        if (left < 8)
            return -1;
        w.p += 8;
        return 1;
    case 2: {
        uint64_t n;
        if (!read_varint(w, n) || n > (uint64_t)(w.end - w.p))
            return -1;
        f.data = w.p;
        f.len = (size_t)n;
        w.p += n;
        return 1;
    }
    case 5:
        if (left < 4)
            return -1;
        f.value = (uint64_t)w.p[0] | (uint64_t)w.p[1] << 8 | (uint64_t)w.p[2] << 16 |
                  (uint64_t)w.p[3] << 24;
        w.p += 4;
        return 1;
    default: // groups: SentencePiece's messages have none
        return -1;
    }
}

// NormalizerSpec: 1 name, 2 precompiled_charsmap, 3 add_dummy_prefix,
// 4 remove_extra_whitespaces, 5 escape_whitespaces.
bool read_normalizer(const unsigned char *p, size_t n, model_facts &mf, bool is_main)
{
    wire w = {p, p + n};
    field f;
    int r;
    while ((r = next_field(w, f)) == 1) {
        if (f.num == 1 && f.type == 2 && is_main)
            mf.normalizer_name.assign((const char *)f.data, f.len);
        else if (f.num == 2 && f.type == 2) {
            if (f.len > 0)
                mf.charsmaps.emplace_back(f.data, f.len);
            if (is_main)
                mf.normalizer_table = f.len > 0;
        } else if (is_main && f.type == 0 && f.num >= 3 && f.num <= 5) {
            bool &flag = f.num == 3 ? mf.add_dummy_prefix
                         : f.num == 4 ? mf.remove_extra_whitespaces : mf.escape_whitespaces;
            flag = f.value != 0;
        }
    }
    return r == 0;
}

// ModelProto.SentencePiece: 1 piece, 2 score (float), 3 type.
bool read_piece(const unsigned char *p, size_t n, model_facts &mf)
{
    wire w = {p, p + n};
    field f;
    int r;
    std::string piece;
    float score = 0;
    int type = 1; // NORMAL
    while ((r = next_field(w, f)) == 1) {
        if (f.num == 1 && f.type == 2)
            piece.assign((const char *)f.data, f.len);
        else if (f.num == 2 && f.type == 5) {
            uint32_t bits = (uint32_t)f.value;
            memcpy(&score, &bits, sizeof score);
        } else if (f.num == 3 && f.type == 0)
            type = (int)f.value;
    }
    mf.piece.push_back(std::move(piece));
    mf.score.push_back(score);
    mf.piece_type.push_back(type);
    return r == 0;
}



// TrainerSpec: 3 model_type, 24 treat_whitespace_as_suffix, 35 byte_fallback.
bool read_trainer(const unsigned char *p, size_t n, model_facts &mf)
{
    wire w = {p, p + n};
    field f;
    int r;
    while ((r = next_field(w, f)) == 1) {
        if (f.type != 0)
            continue;
        if (f.num == 3)
            mf.model_type = (int)f.value;
        else if (f.num == 24)
            mf.whitespace_suffix = f.value != 0;
        else if (f.num == 35)
            mf.byte_fallback = f.value != 0;
    }
    return r == 0;
}

// ModelProto: 1 pieces, 2 trainer_spec, 3 normalizer_spec, 4 self_test_data,
// 5 denormalizer_spec. Fields are read in order; a later one wins, as in
// protobuf, except that every charsmap is kept for checking.
bool read_facts(const unsigned char *p, size_t n, model_facts &mf)
{
    wire w = {p, p + n};
    field f;
    int r, pieces = 0;
    while ((r = next_field(w, f)) == 1) {
        if (f.type != 2)
            continue;
        if (f.num == 1) {
            pieces++;
            // a damaged piece is SentencePiece's to refuse, in its words
            if (!read_piece(f.data, f.len, mf))
                mf.pieces_ok = false;
        } else if (f.num == 2 && !read_trainer(f.data, f.len, mf))
            return false;
        else if ((f.num == 3 || f.num == 5) && !read_normalizer(f.data, f.len, mf, f.num == 3))
            return false;
    }
    return r == 0 && pieces > 0;
}

uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

// A precompiled charsmap: a 4-byte length L, L bytes of darts-clone double
// array (32-bit units), then the replacement strings, each ending in NUL.
// Darts-clone's lookup reads unit 0, then for each byte c of the key the
// unit at (p ^ offset(p)) ^ c of the last unit p it matched, and, where p
// has a leaf, the unit at p ^ offset(p), whose value indexes the strings.
// Units with the top bit set are values and never match a byte, so their
// offsets are never used. The table is safe when every other unit sends
// every byte inside the array and every value inside the strings; the
// strings end in NUL, so none is read past its end.
bool check_charsmap(const unsigned char *p, size_t n)
{
    if (n < 4)
        return false;
    uint32_t trie = le32(p);
    if (trie == 0 || trie % 4 || trie > n - 4 || n - 4 - trie < 1 || p[n - 1] != '\0')
        return false;
    const unsigned char *units = p + 4;
    size_t n_units = trie / 4, n_strings = n - 4 - trie;
    for (size_t i = 0; i < n_units; i++) {
        uint32_t u = le32(units + 4 * i);
        if (u >> 31)
            continue; // a value
        size_t offset = (size_t)(u >> 10) << ((u & (1u << 9)) >> 6);
        size_t next = i ^ offset;
        if ((next | 0xff) >= n_units)
            return false;
        if ((u >> 8) & 1) { // has a leaf: its value at `next`
            uint32_t value = le32(units + 4 * next) & 0x7fffffffu;
            if (value >= n_strings)
                return false;
        }
    }
    return true;
}

const char *type_name(int t)
{
    switch (t) {
    case 1: return "unigram";
    case 2: return "bpe";
    case 3: return "word";
    case 4: return "char";
    default: return NULL;
    }
}

// SentencePiece's messages of failed checks begin with where in its source
// the check is and the condition ("./src/x.cc(660) [a == b] Vocabulary size
// too high ..."): the reason is what follows, if anything does.
std::string reason(const spm::util::Status &st, const char *otherwise)
{
    std::string m = st.message();
    size_t cond = m.find(") [");
    size_t end = cond == std::string::npos ? cond : m.find("] ", cond);
    if (m.rfind("./", 0) == 0 && end != std::string::npos)
        m.erase(0, end + 2);
    while (!m.empty() && (m.back() == ' ' || m.back() == '\n'))
        m.pop_back();
    return m.empty() ? otherwise : m;
}

int status_error(const spm::util::Status &st, const char *what)
{
    return nmt_set_error(NMT_ERR_FORMAT, "%s: %s", what, reason(st, "failed").c_str());
}

// The specials nmt needs at ids 0-3 (vocab.h); SentencePiece's own ids and
// piece names are settings of the model.
int check_specials(const nmt_subwords *sw, const char *name)
{
    static const char *const want[NMT_N_SPECIAL] = {"<pad>", "<unk>", "<s>", "</s>"};
    const spm::SentencePieceProcessor &sp = sw->sp;
    int ids[NMT_N_SPECIAL] = {sp.pad_id(), sp.unk_id(), sp.bos_id(), sp.eos_id()};
    int ok = sp.GetPieceSize() > NMT_N_SPECIAL;
    for (int k = 0; ok && k < NMT_N_SPECIAL; k++)
        ok = ids[k] == k && sp.IdToPiece(k) == want[k];
    if (!ok)
        return nmt_set_error(NMT_ERR_FORMAT,
                             "%s: the SentencePiece model has <pad> <unk> <s> </s> at ids %d %d %d "
                             "%d, but nmt needs them at 0 1 2 3 with those names (its vocabulary "
                             "is the pieces): train it with spm_train --pad_id=0 --unk_id=1 "
                             "--bos_id=2 --eos_id=3 (and the default piece names), or let nmt "
                             "train --subwords N learn one",
                             name, ids[0], ids[1], ids[2], ids[3]);
    for (int id = 0; id < sp.GetPieceSize(); id++)
        if (sp.IdToPiece(id).find('\n') != std::string::npos)
            return nmt_set_error(NMT_ERR_FORMAT,
                                 "%s: SentencePiece piece %d holds a newline, which a model "
                                 "file's vocabulary cannot store", name, id);
    return NMT_OK;
}

#if NMT_SPM_GENERATOR
// nmt's sampler for a model whose sampling it reproduces (see the top of
// this file), or none. What was read of the pieces must be what
// SentencePiece loaded, piece by piece, or SentencePiece samples.
nmt_unigram *own_sampler(const spm::SentencePieceProcessor &sp, const model_facts &mf)
{
    size_t n = mf.piece.size();
    if (mf.model_type != 1 || mf.byte_fallback || mf.whitespace_suffix || mf.normalizer_table ||
        !mf.pieces_ok || n != (size_t)sp.GetPieceSize())
        return nullptr;
    std::vector<const char *> piece(n);
    std::vector<size_t> len(n);
    for (size_t i = 0; i < n; i++) {
        int id = (int)i, t = mf.piece_type[i];
        if (t < NMT_PIECE_NORMAL || t > NMT_PIECE_BYTE) // protobuf would read it as NORMAL
            return nullptr;
        float sp_score = sp.GetScore(id);
        if (sp.IdToPiece(id) != mf.piece[i] || memcmp(&sp_score, &mf.score[i], sizeof sp_score) ||
            sp.IsUnknown(id) != (t == NMT_PIECE_UNKNOWN) ||
            sp.IsControl(id) != (t == NMT_PIECE_CONTROL) ||
            sp.IsUnused(id) != (t == NMT_PIECE_UNUSED) || sp.IsByte(id) != (t == NMT_PIECE_BYTE))
            return nullptr;
        piece[i] = mf.piece[i].data();
        len[i] = mf.piece[i].size();
    }
    nmt_unigram_spec spec = {n, piece.data(), len.data(), mf.score.data(), mf.piece_type.data(),
                             mf.add_dummy_prefix, mf.remove_extra_whitespaces,
                             mf.escape_whitespaces};
    nmt_unigram *u;
    if (nmt_unigram_new(&u, &spec))
        throw std::bad_alloc();
    return u;
}
#else
nmt_unigram *own_sampler(const spm::SentencePieceProcessor &, const model_facts &)
{
    return nullptr;
}
#endif

int load(nmt_subwords **out, std::string &&bytes, const char *name)
{
    model_facts mf;
    const unsigned char *b = (const unsigned char *)bytes.data();
    if (!read_facts(b, bytes.size(), mf))
        return nmt_set_error(NMT_ERR_FORMAT, "%s: not a SentencePiece model (%zu bytes that do not "
                             "parse as one)", name, bytes.size());
    for (const auto &cm : mf.charsmaps)
        if (!check_charsmap(cm.first, cm.second))
            return nmt_set_error(NMT_ERR_FORMAT, "%s: the SentencePiece model's normalization "
                                 "table is damaged", name);
    if (!type_name(mf.model_type))
        return nmt_set_error(NMT_ERR_FORMAT, "%s: unknown SentencePiece model type %d", name,
                             mf.model_type);
    if (mf.whitespace_suffix)
        return nmt_set_error(NMT_ERR_FORMAT, "%s: the SentencePiece model marks spaces at the end "
                             "of words (treat_whitespace_as_suffix); nmt needs them at the start",
                             name);
    // owned here until every check has passed: SentencePiece's loading and
    // the checks allocate, and may throw
    std::unique_ptr<nmt_subwords> sw(new nmt_subwords);
    sw->bytes = std::move(bytes);
    sw->type = type_name(mf.model_type);
    sw->normalization = mf.normalizer_name;
    sw->byte_fallback = mf.byte_fallback;
    spm::util::Status st = sw->sp.LoadFromSerializedProto(sw->bytes);
    int rc = st.ok() ? check_specials(sw.get(), name)
                     : nmt_set_error(NMT_ERR_FORMAT, "%s: SentencePiece cannot load the model: %s",
                                     name, reason(st, "it does not parse").c_str());
    if (rc)
        return rc;
    sw->sampler.reset(own_sampler(sw->sp, mf));
    *out = sw.release();
    return NMT_OK;
}

// nmt_line_source as SentencePiece's sentence iterator.
class line_iterator : public spm::SentenceIterator {
public:
    line_iterator(nmt_line_source next, void *ctx) : next_(next), ctx_(ctx) { Next(); }
    bool done() const override { return done_; }
    void Next() override
    {
        const char *line;
        size_t len;
        int r = next_(ctx_, &line, &len);
        if (r == 1) {
            value_.assign(line, len);
            return;
        }
        done_ = true;
        if (r < 0) {
            rc_ = r;
            message_ = nmt_error_message();
        }
    }
    const std::string &value() const override { return value_; }
    spm::util::Status status() const override
    {
        return rc_ ? spm::util::Status(spm::util::StatusCode::kInternal, message_)
                   : spm::util::Status();
    }
    int rc() const { return rc_; }
    const std::string &message() const { return message_; }

private:
    nmt_line_source next_;
    void *ctx_;
    std::string value_, message_;
    bool done_ = false;
    int rc_ = NMT_OK;
};

int out_of_memory(const char *what)
{
    return nmt_set_error(NMT_ERR_NOMEM, "out of memory %s", what);
}

// The error of the exception being handled, called from a catch (...) at
// the C boundary: std::bad_alloc is NMT_ERR_NOMEM, another std::exception
// is `code` with its what(), anything else `code` with a message saying it
// was no std::exception. `name`, where the model came from, heads the
// message when given; `doing` says what failed ("encoding a line"). Nothing
// here allocates.
int caught(int code, const char *name, const char *doing)
{
    const char *sep = name ? ": " : "";
    name = name ? name : "";
    try {
        throw;
    } catch (const std::bad_alloc &) {
        return nmt_set_error(NMT_ERR_NOMEM, "%s%sout of memory %s", name, sep, doing);
    } catch (const std::exception &e) {
        return nmt_set_error(code, "%s%sSentencePiece failed %s: %s", name, sep, doing, e.what());
    } catch (...) {
        return nmt_set_error(code, "%s%sSentencePiece failed %s (an exception that is not a "
                             "std::exception)", name, sep, doing);
    }
}

// Closes a FILE when its owner goes, however it goes.
struct file_closer {
    void operator()(FILE *f) const { fclose(f); }
};
using file_ptr = std::unique_ptr<FILE, file_closer>;

} // namespace

#if NMT_SPM_GENERATOR
namespace {

// This thread's lattice buffers, kept from call to call and freed with the
// thread.
struct lattice_owner {
    nmt_lattice *l = nullptr;
    ~lattice_owner() { nmt_lattice_free(l); }
};
thread_local lattice_owner tl_lattice;

// One uniform double as std::discrete_distribution draws it in libstdc++
// (its _Adaptor: generate_canonical at double's 53 bits, two 32-bit draws).
double spm_uniform(void *g)
{
    return std::generate_canonical<double, std::numeric_limits<double>::digits>(
        *static_cast<std::mt19937 *>(g));
}

} // namespace
#endif

// With nmt's sampler: 1 when SentencePiece must do it (no sampler for the
// model, or a line too long for it: nothing was drawn), else its result.
static int sample_own(const nmt_subwords *sw, const char *text, size_t len, float alpha,
                      nmt_ids *out, nmt_ids *begin)
{
#if NMT_SPM_GENERATOR
    if (!sw->sampler || !sw->native)
        return 1;
    if (!tl_lattice.l && !(tl_lattice.l = nmt_lattice_new()))
        return out_of_memory("for a subword lattice");
    int rc = nmt_unigram_sample(sw->sampler.get(), tl_lattice.l, text, len, alpha, spm_uniform,
                                spm::random::GetRandomGenerator(), out, begin);
    return rc < 0 ? out_of_memory("for a subword lattice") : rc;
#else
    return 1;
#endif
}

extern "C" {

int nmt_subwords_learn(nmt_subwords **out, int n_pieces, nmt_line_source next, void *ctx)
{
    *out = NULL;
    if (n_pieces <= NMT_N_SPECIAL)
        return nmt_set_error(NMT_ERR_ARG, "a subword model needs more than %d pieces, not %d",
                             NMT_N_SPECIAL, n_pieces);
    try {
        // Fixed settings, so that the same corpus gives the same model on
        // any machine: the unigram trainer sums its EM statistics per thread
        // (a different thread count rounds them differently); every
        // sentence is used (no sampling of the input).
        const std::unordered_map<std::string, std::string> args = {
            {"model_type", "unigram"},
            {"vocab_size", std::to_string(n_pieces)},
            {"character_coverage", "1.0"},
            {"normalization_rule_name", "identity"},
            {"byte_fallback", "false"},
            {"pad_id", "0"},
            {"unk_id", "1"},
            {"bos_id", "2"},
            {"eos_id", "3"},
            {"input_sentence_size", "0"},
            {"num_threads", "2"},
            {"minloglevel", "3"},
        };
        line_iterator it(next, ctx);
        std::string model;
        spm::util::Status st = spm::SentencePieceTrainer::Train(args, &it, &model);
        if (it.rc())
            return nmt_set_error(it.rc(), "%s", it.message().c_str());
        if (!st.ok())
            return nmt_set_error(NMT_ERR_ARG, "SentencePiece cannot learn %d pieces: %s", n_pieces,
                                 reason(st, "it failed").c_str());
        return load(out, std::move(model), "the learned subword model");
    } catch (...) {
        return caught(NMT_ERR_ARG, NULL, "learning subwords");
    }
}

int nmt_subwords_load(nmt_subwords **out, const void *bytes, size_t n, const char *name)
{
    *out = NULL;
    try {
        return load(out, std::string((const char *)bytes, n), name);
    } catch (...) {
        return caught(NMT_ERR_FORMAT, name, "loading a subword model");
    }
}

int nmt_subwords_load_file(nmt_subwords **out, const char *path)
{
    *out = NULL;
    try {
        file_ptr f(fopen(path, "rb"));
        if (!f)
            return nmt_set_error(NMT_ERR_IO, "%s: %s", path, strerror(errno));
        struct stat st;
        if (fstat(fileno(f.get()), &st) == 0 && S_ISDIR(st.st_mode))
            return nmt_set_error(NMT_ERR_IO, "%s: is a directory, not a SentencePiece model",
                                 path);
        std::string bytes;
        char buf[1 << 16];
        size_t got;
        // A SentencePiece model is a few MB at most; 1 GB is not one.
        while ((got = fread(buf, 1, sizeof buf, f.get())) > 0 && bytes.size() < (1u << 30))
            bytes.append(buf, got);
        int bad = ferror(f.get());
        f.reset();
        if (bad)
            return nmt_set_error(NMT_ERR_IO, "%s: read error", path);
        if (bytes.size() >= (1u << 30))
            return nmt_set_error(NMT_ERR_FORMAT, "%s: too large for a SentencePiece model", path);
        return load(out, std::move(bytes), path);
    } catch (...) {
        return caught(NMT_ERR_FORMAT, path, "loading a subword model");
    }
}

void nmt_subwords_free(nmt_subwords *sw)
{
    delete sw;
}

const unsigned char *nmt_subwords_bytes(const nmt_subwords *sw, size_t *n)
{
    *n = sw->bytes.size();
    return (const unsigned char *)sw->bytes.data();
}

int nmt_subwords_size(const nmt_subwords *sw)
{
    return sw->sp.GetPieceSize();
}

const char *nmt_subwords_piece(const nmt_subwords *sw, int32_t id)
{
    if (id < 0 || id >= sw->sp.GetPieceSize())
        return NULL;
    return sw->sp.IdToPiece(id).c_str();
}

const char *nmt_subwords_type(const nmt_subwords *sw)
{
    return sw->type.c_str();
}

const char *nmt_subwords_normalization(const nmt_subwords *sw)
{
    return sw->normalization.c_str();
}

int nmt_subwords_byte_fallback(const nmt_subwords *sw)
{
    return sw->byte_fallback;
}

void nmt_ids_free(nmt_ids *ids)
{
    free(ids->id);
    memset(ids, 0, sizeof *ids);
}

int nmt_subwords_encode_ids(const nmt_subwords *sw, const char *text, size_t len, float alpha,
                            nmt_ids *out)
{
    out->n = 0;
    if (alpha > 0 && sw->type != "unigram")
        return nmt_set_error(NMT_ERR_ARG, "subword sampling needs a unigram model, not %s",
                             sw->type.c_str());
    try {
        int own = alpha > 0 ? sample_own(sw, text, len, alpha, out, NULL) : 1;
        if (own <= 0)
            return own;
        std::vector<int> ids;
        absl::string_view in(text, len);
        spm::util::Status st = alpha > 0 ? sw->sp.SampleEncode(in, -1, alpha, &ids)
                                         : sw->sp.Encode(in, &ids);
        if (!st.ok())
            return status_error(st, "SentencePiece cannot encode a line");
        if (ids.size() > out->cap) {
            int32_t *grown = (int32_t *)realloc(out->id, ids.size() * sizeof *grown);
            if (!grown)
                return out_of_memory("for piece ids");
            out->id = grown;
            out->cap = ids.size();
        }
        for (size_t k = 0; k < ids.size(); k++)
            out->id[k] = ids[k];
        out->n = ids.size();
        return NMT_OK;
    } catch (...) {
        return caught(NMT_ERR_FORMAT, NULL, "encoding a line");
    }
}

int nmt_subwords_encode_spans(const nmt_subwords *sw, const char *text, size_t len, float alpha,
                              nmt_ids *out, nmt_ids *begin)
{
    out->n = begin->n = 0;
    if (alpha > 0 && sw->type != "unigram")
        return nmt_set_error(NMT_ERR_ARG, "subword sampling needs a unigram model, not %s",
                             sw->type.c_str());
    try {
        int own = alpha > 0 ? sample_own(sw, text, len, alpha, out, begin) : 1;
        if (own <= 0)
            return own;
        // what the ids-only calls do inside, with the pieces' spans kept:
        // the same segmentation, and the same draws from the generator
        spm::ImmutableSentencePieceText spt;
        absl::string_view in(text, len);
        spm::util::Status st = alpha > 0 ? sw->sp.SampleEncode(in, -1, alpha, spt.mutable_proto())
                                         : sw->sp.Encode(in, spt.mutable_proto());
        if (!st.ok())
            return status_error(st, "SentencePiece cannot encode a line");
        size_t n = spt.pieces_size();
        nmt_ids *grow[2] = {out, begin};
        for (nmt_ids *g : grow)
            if (n > g->cap) {
                int32_t *grown = (int32_t *)realloc(g->id, n * sizeof *grown);
                if (!grown)
                    return out_of_memory("for piece ids");
                g->id = grown;
                g->cap = n;
            }
        for (size_t k = 0; k < n; k++) {
            auto piece = spt.pieces((int)k);
            out->id[k] = (int32_t)piece.id();
            begin->id[k] = (int32_t)piece.begin();
        }
        out->n = begin->n = n;
        return NMT_OK;
    } catch (...) {
        return caught(NMT_ERR_FORMAT, NULL, "encoding a line");
    }
}

int nmt_subwords_encode(const nmt_subwords *sw, const char *text, size_t len, nmt_tokens *out)
{
    out->n = 0;
    try {
        std::vector<std::string> pieces;
        spm::util::Status st = sw->sp.Encode(absl::string_view(text, len), &pieces);
        if (!st.ok())
            return status_error(st, "SentencePiece cannot encode a line");
        for (const std::string &p : pieces) {
            int rc = nmt_tokens_push(out, p.data(), p.size());
            if (rc)
                return rc;
        }
        return NMT_OK;
    } catch (...) {
        return caught(NMT_ERR_FORMAT, NULL, "encoding a line");
    }
}

char *nmt_subwords_decode(const nmt_subwords *sw, const char *const *pieces, size_t n)
{
    try {
        std::vector<std::string> in(pieces, pieces + n);
        std::string text;
        spm::util::Status st = sw->sp.Decode(in, &text);
        if (!st.ok()) {
            status_error(st, "SentencePiece cannot decode pieces");
            return NULL;
        }
        char *s = (char *)malloc(text.size() + 1);
        if (!s) {
            out_of_memory("decoding subwords");
            return NULL;
        }
        memcpy(s, text.c_str(), text.size() + 1);
        return s;
    } catch (...) {
        caught(NMT_ERR_FORMAT, NULL, "decoding pieces");
        return NULL;
    }
}

int nmt_piece_starts_word(const char *piece)
{
    return !strncmp(piece, "\xe2\x96\x81", 3);
}

int nmt_subwords_own_sampler(const nmt_subwords *sw)
{
    return sw->sampler && sw->native;
}

void nmt_subwords_use_own_sampler(nmt_subwords *sw, int on)
{
    sw->native = on != 0;
}

int nmt_subwords_run_seeded(uint32_t seed, int (*fn)(void *ctx), void *ctx)
{
    // -1 is SentencePiece's "not set" value; it is ignored when set.
    spm::SetRandomGeneratorSeed(seed == UINT32_MAX ? seed - 1 : seed);
    int rc = NMT_OK;
    std::string message;
    try {
        std::thread t([&]() {
            rc = fn(ctx);
            try {
                if (rc)
                    message = nmt_error_message();
            } catch (...) { // the code goes back without its message
            }
        });
        t.join();
    } catch (...) {
        return nmt_set_error(NMT_ERR_NOMEM, "cannot start a thread for subword sampling");
    }
    // the message was set on the other thread: errors are kept per thread
    if (rc)
        nmt_set_error(rc, "%s", message.c_str());
    return rc;
}

} // extern "C"
