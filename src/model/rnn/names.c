/* The RNN's settings by name (nmt/rnn.h): cells and attention kinds, and
 * which kinds fit which encoder. */
#include <string.h>

#include "nmt/error.h"
#include "nmt/rnn.h"

const char *nmt_cell_name(nmt_cell c)
{
    switch (c) {
    case NMT_CELL_RNN: return "rnn";
    case NMT_CELL_GRU: return "gru";
    case NMT_CELL_LSTM: return "lstm";
    }
    return "?";
}

const char *nmt_attention_name(nmt_attention a)
{
    switch (a) {
    case NMT_ATT_NONE: return "none";
    case NMT_ATT_BAHDANAU: return "bahdanau";
    case NMT_ATT_DOT: return "dot";
    case NMT_ATT_GENERAL: return "general";
    case NMT_ATT_SCALED_DOT: return "scaled-dot";
    }
    return "?";
}

int nmt_attention_uses_att_dim(nmt_attention a)
{
    return a == NMT_ATT_BAHDANAU || a == NMT_ATT_SCALED_DOT;
}

int nmt_attention_check(nmt_attention a, int bidirectional, int hidden)
{
    if (a == NMT_ATT_DOT && bidirectional)
        return nmt_set_error(NMT_ERR_ARG,
                             "attention dot scores s . h_j, so it needs annotations h_j of the "
                             "decoder state's size H = %d, and a bidirectional encoder's have "
                             "2H = %d (use a unidirectional encoder, or general or scaled-dot, "
                             "which project h_j)", hidden, 2 * hidden);
    return NMT_OK;
}

int nmt_cell_parse(const char *s, nmt_cell *out)
{
    static const nmt_cell all[] = {NMT_CELL_RNN, NMT_CELL_GRU, NMT_CELL_LSTM};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (s && strcmp(s, nmt_cell_name(all[i])) == 0) {
            *out = all[i];
            return NMT_OK;
        }
    return nmt_set_error(NMT_ERR_ARG, "unknown cell '%s' (rnn, gru or lstm)", s ? s : "");
}

int nmt_attention_parse(const char *s, nmt_attention *out)
{
    static const nmt_attention all[] = {NMT_ATT_BAHDANAU, NMT_ATT_DOT, NMT_ATT_GENERAL,
                                        NMT_ATT_SCALED_DOT, NMT_ATT_NONE};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (s && strcmp(s, nmt_attention_name(all[i])) == 0) {
            *out = all[i];
            return NMT_OK;
        }
    return nmt_set_error(NMT_ERR_ARG,
                         "unknown attention '%s' (bahdanau, dot, general, scaled-dot or none)",
                         s ? s : "");
}
