# scripts/experiments/multi30k-experiment end to end at a tiny size, and what it rests on.
#
# The premises, with nmt alone: --archive-snapshots and --batch-log leave a
# run's weights as they are; the batch log's first line names the weights
# the run starts from (those of --max-steps 0 with the same options) and
# every step carries its lr; pytorch/torch_baseline.py refuses a batch log
# of other weights and a recipe with a setting it does not know, and follows
# one with --decay-from and a warm-up's share (settings that only change the
# logged lr).
#
# The Transformer's PyTorch peer (pytorch/torch_transformer.py follow): from
# the same weights on the same batches its losses are nmt's; it refuses
# batches of other weights, an unknown setting and an RNN's recipe.
#
# The script: --quick with 3-second runs of all five on a corpus cut from
# the toy corpus (named as Multi30k's files), with tiny sizes and subwords
# given through NMT_M30K_TEST_TRAIN_OPTS and NMT_M30K_TEST_TRANSFORMER_OPTS
# (for this test only; results.md then says it is not the experiment).
# Checks that every output is there, the tables have their rows, the SVGs
# parse, and both PyTorch runs' snapshots carry the subword model so that
# nmt translates raw text with them; that the Transformer run has no recipe
# options by default; that every final model has its BLEU by length; that
# the tokenized BLEU, with stand-ins for Multi30k's tok files and Moses
# scripts (the real ones are not ours to keep; the test needs their names
# and layout only), is nmt bleu -tok none of the stand-in pipeline's output
# against the stand-in reference; that --direction en-de swaps the files
# (in the commands, the tokenized reference, the titles); that --with joins
# the runs of two outputs into the report of both; and that --runs, --with,
# --direction and --tok-bleu refuse what they cannot do. Needs python3-torch
# for the PyTorch parts (without it the script runs with --skip-torch: the
# three nmt runs).
. "$(dirname "$0")/lib.sh"
ROOT=${NMT_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=$(dirname "$(dirname "$NMT_BIN")")
PY=/usr/bin/python3
[ -x $PY ] || PY=python3
TORCH=1
$PY -c 'import torch, numpy' 2>/dev/null || { TORCH=0; echo "no torch: the PyTorch parts are skipped"; }
REPORT="$ROOT/scripts/experiments/multi30k_report.py"

# a small "Multi30k" from the toy corpus
C=$TMP/m30k
mkdir -p "$C"
for split in train:train:1500 val:valid:40 test_2016_flickr:test:40; do
    IFS=: read -r to from n <<<"$split"
    zcat "$ROOT/corpora/toy/$from.src.gz" | head -n "$n" | gzip >"$C/$to.de.gz"
    zcat "$ROOT/corpora/toy/$from.tgt.gz" | head -n "$n" | gzip >"$C/$to.en.gz"
done
DATA=(--src "$C/train.de.gz" --tgt "$C/train.en.gz" --valid-src "$C/val.de.gz"
      --valid-tgt "$C/val.en.gz")

# standin_tok DIR: stand-ins for what scripts/data/get-multi30k --tok puts beside
# the raw files in DIR, laid out as it does: moses/ (the three scripts, run
# with perl, and the prefix lists) and tok/, the stand-in pipeline's output
# of DIR's raw test and val files, as Multi30k's tok files are the real
# one's. The "tokenizer" splits words into characters, so that even an
# untrained model's output shares n-grams with the reference.
standin_tok() {
    local d=$1 m=$1/moses/tokenizer split l
    mkdir -p "$m" "$d/moses/share/nonbreaking_prefixes" "$d/tok"
    echo 'binmode(STDIN, ":utf8"); binmode(STDOUT, ":utf8"); print lc while <STDIN>;' \
        >"$m/lowercase.perl"
    echo 'print while <STDIN>;' >"$m/normalize-punctuation.perl"
    echo 'binmode(STDIN, ":utf8"); binmode(STDOUT, ":utf8");
          while (<STDIN>) { s/(\S)/$1 /g; s/ +$//; print; }' >"$m/tokenizer.perl"
    for l in de en; do
        : >"$d/moses/share/nonbreaking_prefixes/nonbreaking_prefix.$l"
        for split in test_2016_flickr val; do
            zcat "$d/$split.$l.gz" | standin_pipeline "$d" $l >"$d/tok/$split.lc.norm.tok.$l"
        done
    done
}
# standin_pipeline DIR LANG: the stand-ins of DIR in Multi30k's order
standin_pipeline() {
    perl "$1/moses/tokenizer/lowercase.perl" | perl "$1/moses/tokenizer/normalize-punctuation.perl" \
        -l "$2" | perl "$1/moses/tokenizer/tokenizer.perl" -l "$2" -q
}
standin_tok "$C"
TINY=(--emb 16 --hidden 16 --att-dim 16 --out-dim 16)

# data crc32 of a safetensors file (weights and moments; not the metadata)
crc() { $PY -c 'import json, struct, sys
f = open(sys.argv[1], "rb"); n = struct.unpack("<Q", f.read(8))[0]
print(json.loads(f.read(n))["__metadata__"]["crc32"])' "$1"; }

# -- --archive-snapshots and --batch-log do not change the run --
RUN=("${DATA[@]}" "${TINY[@]}" --max-steps 30 --valid-every 10 --threads 1)
expect_ok "plain run" "$NMT" train --arch rnn "${RUN[@]}" --out "$TMP/plain" -q
expect_ok "observed run" "$NMT" train --arch rnn "${RUN[@]}" --out "$TMP/observed" -q \
    --archive-snapshots "$TMP/archive" --batch-log "$TMP/batches.jsonl"
for f in checkpoint best; do
    [ "$(crc "$TMP/plain/$f.safetensors")" = "$(crc "$TMP/observed/$f.safetensors")" ] && pass ||
        fail "$f.safetensors differs with --archive-snapshots and --batch-log"
done
for s in 10 20 30; do
    [ -f "$TMP/archive/snapshot-$s.safetensors" ] && pass || fail "no archived snapshot-$s"
done
expect_ok "archived model translates" "$NMT" translate -m "$TMP/archive/snapshot-20.safetensors" \
    -i "$C/test_2016_flickr.de.gz" -b 1 -q
expect_fail "archive needs validation" "needs a validation set" "$NMT" train --arch rnn \
    --src "$C/train.de.gz" --tgt "$C/train.en.gz" "${TINY[@]}" --max-steps 1 \
    --archive-snapshots "$TMP/a2" --out "$TMP/novalid"

# -- the batch log: its first line names the initial weights; every step its lr --
expect_ok "initial model" "$NMT" train --arch rnn "${RUN[@]}" --max-steps 0 --out "$TMP/init" -q
expect_ok "starts from the initial model" $PY "$REPORT" start-crc \
    "$TMP/init/checkpoint.safetensors" "$TMP/batches.jsonl"
expect_ok "other initial model" "$NMT" train --arch rnn "${RUN[@]}" --seed 2 --max-steps 0 \
    --out "$TMP/init2" -q
expect_fail "not from another model" "did not start from" $PY "$REPORT" start-crc \
    "$TMP/init2/checkpoint.safetensors" "$TMP/batches.jsonl"
$PY - "$TMP/batches.jsonl" <<'EOF' && pass || fail "every step's line has the lr"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert "weights_crc32" in lines[0] and lines[0]["start_step"] == 0
steps = lines[1:]
assert [j["step"] for j in steps] == list(range(1, 31))
assert all(j["lr"] == 0.001 for j in steps), [j["lr"] for j in steps]
EOF

# a run whose checkpoint carries train.decay_from and train.warmup_share,
# settings that only change nmt's lr (which the batch log carries): the
# followers accept them
expect_ok "run with a late linear decay" "$NMT" train --arch rnn "${RUN[@]}" --lr-schedule linear \
    --decay-from 0.5 --warmup 5 --out "$TMP/decay" -q

# -- torch_baseline.py refuses what it cannot follow (one python, one torch import) --
if [ $TORCH = 1 ]; then
    $PY - "$ROOT/pytorch" "$TMP" >"$TMP/tb.out" 2>&1 <<'EOF' && pass || fail "$(cat "$TMP/tb.out")"
import sys
sys.path.insert(0, sys.argv[1])
import torch_baseline as tb
T = sys.argv[2]
arrays, meta, _ = tb.read_safetensors(T + "/observed/checkpoint.safetensors")
meta["train.warmup_steps"] = "4000"  # a setting the script does not know
tb.write_safetensors(T + "/odd.safetensors", list(arrays.items()), meta)
run = lambda init, recipe, *more: tb.main(
    ["train", "--init-from", T + "/%s/checkpoint.safetensors" % init, "--batches",
     T + "/batches.jsonl", "--recipe-from", recipe, "--dry-run"] + list(more))
good = T + "/observed/checkpoint.safetensors"
assert run("init", good) == 0  # follows nmt's recipe
assert run("init", T + "/decay/checkpoint.safetensors") == 0  # --decay-from: the lr is logged
bad = 0
for what, args, message in (
        ("batches of other weights", ("init2", good), "starts from other weights"),
        ("an unknown setting", ("init", T + "/odd.safetensors"), "train.warmup_steps = 4000 unknown"),
        ("an option against the recipe", ("init", good, "--clip", "1"), "contradicts the recipe")):
    try:
        run(*args)
        print("FAIL torch_baseline accepts %s" % what)
        bad += 1
    except ValueError as e:
        if message not in str(e):
            print("FAIL %s: %s" % (what, e))
            bad += 1
sys.exit(1 if bad else 0)
EOF
fi

# -- torch_transformer.py follow: from nmt's initial Transformer on its batches
# and lr (dropout 0, so that no mask differs), its losses are nmt's to the
# rounding of log.tsv; it refuses what it cannot follow --
TF_TINY=(--d-model 16 --heads 2 --ff 32 --layers 1 --subwords 120)
TF=(--arch transformer "${TF_TINY[@]}" --warmup 10 --threads 1)
expect_ok "Transformer's initial model" "$NMT" train "${DATA[@]}" "${TF[@]}" --max-steps 0 \
    --out "$TMP/tinit" -q
expect_ok "Transformer run, dropout 0" "$NMT" train "${DATA[@]}" "${TF[@]}" --dropout 0 \
    --max-steps 3 --report-every 1 --out "$TMP/trun" -q --batch-log "$TMP/tbatches.jsonl"
if [ $TORCH = 1 ]; then
    $PY - "$ROOT/pytorch" "$TMP" >"$TMP/tt.out" 2>&1 <<'EOF' && pass || fail "$(cat "$TMP/tt.out")"
import json, sys
sys.path.insert(0, sys.argv[1])
import torch_transformer as tt
import torch_baseline as tb
T = sys.argv[2]
init, ckpt = T + "/tinit/checkpoint.safetensors", T + "/trun/checkpoint.safetensors"
follow = lambda *more, batches=T + "/tbatches.jsonl", recipe=ckpt: tt.main(
    ["follow", "--init-from", init, "--batches", batches, "--recipe-from", recipe] + list(more))
follow("--max-steps", "3", "--log", T + "/tlog.tsv")
rows = lambda f: [l.rstrip("\n").split("\t") for l in open(f)]
nmt = {int(r[0]): float(r[3]) for r in rows(T + "/trun/log.tsv")[1:] if r[3]}
mine = {int(r[0]): float(r[1]) for r in rows(T + "/tlog.tsv")[1:]}
assert sorted(nmt) == sorted(mine) == [1, 2, 3], (nmt, mine)
for s in nmt:  # log.tsv has 4 decimals
    assert abs(nmt[s] - mine[s]) <= 6e-5, (s, nmt[s], mine[s])
print("losses: nmt %s, PyTorch %s" % (nmt, mine))
arrays, meta, _ = tb.read_safetensors(ckpt)
meta["train.warmup_steps"] = "4000"  # a setting the script does not know
tb.write_safetensors(T + "/todd.safetensors", list(arrays.items()), meta)
lines = open(T + "/tbatches.jsonl").read().splitlines()
first = json.loads(lines[0])
first["weights_crc32"] = "%08x" % (int(first["weights_crc32"], 16) ^ 1)
open(T + "/tother.jsonl", "w").write("\n".join([json.dumps(first)] + lines[1:]) + "\n")
bad = 0
for what, kw, message in (
        ("batches of other weights", {"batches": T + "/tother.jsonl"}, "starts from other weights"),
        ("an unknown setting", {"recipe": T + "/todd.safetensors"}, "train.warmup_steps = 4000 unknown"),
        ("an RNN's recipe", {"recipe": T + "/observed/checkpoint.safetensors"},
         "must both be Transformers")):
    try:
        follow("--dry-run", **kw)
        print("FAIL torch_transformer accepts %s" % what)
        bad += 1
    except ValueError as e:
        if message not in str(e):
            print("FAIL %s: %s" % (what, e))
            bad += 1
sys.exit(1 if bad else 0)
EOF
    cat "$TMP/tt.out"
fi

# -- the script, tiny --
OUT=$TMP/exp
SKIP=()
[ $TORCH = 1 ] || SKIP=(--skip-torch)
t0=$SECONDS
if NMT_BUILD_DIR=$BUILD NMT_M30K_TEST_TRAIN_OPTS="${TINY[*]} --subwords 120 --valid-every 20" \
    NMT_M30K_TEST_TRANSFORMER_OPTS="${TF_TINY[*]} --warmup 20 --valid-every 20" \
    "$ROOT/scripts/experiments/multi30k-experiment" --quick --minutes 0.05 --from "$C" --out "$OUT" "${SKIP[@]}" \
    >"$TMP/script.out" 2>&1; then pass; else
    fail "scripts/experiments/multi30k-experiment: $(tail -n 8 "$TMP/script.out")"
fi
echo "the script took $((SECONDS - t0)) s"
for f in results.md results.tsv bleu-vs-time.svg info.tsv attention/log.tsv none/log.tsv \
    attention/batches.jsonl.gz init/checkpoint.safetensors eval/scores.tsv transformer/log.tsv \
    transformer/batches.jsonl.gz init-transformer/checkpoint.safetensors; do
    [ -s "$OUT/$f" ] && pass || fail "no $f"
done
grep -q "Not the experiment" "$OUT/results.md" && pass || fail "results.md says it is a test"
RUNS=("nmt, attention" "nmt, no attention" "nmt, Transformer")
[ $TORCH = 1 ] && RUNS+=("PyTorch, attention" "PyTorch, Transformer")
for r in "${RUNS[@]}"; do
    # a final row (its model file named) and at least one point row
    grep -Eq "^\| $r \| (best|snapshot-[0-9]+)\.safetensors \(step [0-9]+" "$OUT/results.md" &&
        pass || fail "results.md: no final row for $r"
    grep -Eq "^\| $r \| [0-9]+ \| [0-9.]+ \|" "$OUT/results.md" && pass ||
        fail "results.md: no point rows for $r"
done
grep -Eq '^- commit: [0-9a-f]{7}' "$OUT/results.md" && grep -q '^- machine: ' "$OUT/results.md" &&
    grep -q '^- load (1, 5, 15 min) nmt, attention: before [0-9.]' "$OUT/results.md" && pass ||
    fail "results.md: commit, machine, load"
# the Transformer has its defaults: nothing between --arch and the test's sizes
grep -q -- "--max-time [0-9]*s --arch transformer --d-model 16 " "$OUT/info.tsv" &&
    grep -q "^- the Transformer: \`nmt train --arch transformer\`'s defaults" "$OUT/results.md" &&
    pass || fail "the Transformer's options: not its defaults"
grep -q "^# Multi30k De→En" "$OUT/results.md" && grep -q "^- direction: De→En" "$OUT/results.md" &&
    pass || fail "results.md: the direction"
# the tokenized BLEU: the stand-in pipeline remade its own tok files; every
# final model's figures are nmt bleu -tok none of the pipeline's output
grep -q "test_2016_flickr.de 40/40 lines, test_2016_flickr.en 40/40 lines, val.de 40/40 lines, val.en 40/40 lines identical" \
    "$OUT/results.md" && pass || fail "results.md: the tokenization's agreement"
# tok_check OUT LANG: every final model's BLEU tok lc (beam, greedy) in
# OUT/results.tsv is nmt bleu -tok none of its translation through the
# stand-ins against the stand-in reference of LANG
tok_check() {
    local out=$1 l=$2 n=0 run kind json col want got txt
    while IFS=$'\t' read -r run kind json; do
        for col in beam greedy; do
            txt=$out/eval/$(basename "$json" .beam.by-length.json).$col.txt
            standin_pipeline "$C" $l <"$txt" >"$TMP/hyp.tok"
            cmp -s "$TMP/hyp.tok" "$txt.tok" || { fail "$txt.tok: not the pipeline's output"; continue; }
            want=$("$NMT" bleu -b -q -tok none "$C/tok/test_2016_flickr.lc.norm.tok.$l" -i "$TMP/hyp.tok")
            got=$($PY -c 'import csv, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
print([r for r in rows if r["run"] == sys.argv[2] and r["kind"] == "final"][0][sys.argv[3]])' \
                "$out/results.tsv" "$run" "${col}_bleu_tok")
            [ "$got" = "$want" ] && pass || fail "$run $col: BLEU tok lc $got, nmt bleu -tok none $want"
            echo "$run $col: BLEU tok lc $got"
            n=$((n + 1))
        done
    done < <(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
                        $c["kind"] == "final" { print $c["run"] "\t" $c["kind"] "\t" $c["beam_by_length"] }' \
             "$out/results.tsv")
    [ $n -gt 0 ] && pass || fail "$out: no final model with a tokenized BLEU"
}
tok_check "$OUT" en
# BLEU by length: a row per bucket with sentences, a column per run, a line
# per run in the SVG
$PY - "$OUT" $TORCH <<'EOF' && pass || fail "the BLEU-by-length table or its SVG"
import sys, xml.etree.ElementTree as ET
out, torch = sys.argv[1], sys.argv[2] == "1"
runs = ["nmt, attention", "nmt, no attention", "nmt, Transformer"] + (
    ["PyTorch, attention", "PyTorch, Transformer"] if torch else [])
md = open(out + "/results.md").read().split("\n## ")
table = [s for s in md if s.startswith("BLEU by source length")][0].splitlines()
head = [l for l in table if l.startswith("| source words")][0]
assert head == "| source words (sentences) | %s |" % " | ".join(runs), head
rows = [l for l in table if l.startswith("| 1-10 (") or l.startswith("| 11-20 (")]
assert len(rows) == 2 and all(len(r.split("|")) == len(runs) + 3 for r in rows), rows
svg = ET.parse(out + "/bleu-by-length.svg").getroot()
ns = "{http://www.w3.org/2000/svg}"
assert len(svg.findall(ns + "polyline")) == len(runs)
assert "De→En" in " ".join(t.text or "" for t in svg.iter(ns + "text"))
EOF
$PY - "$OUT" $TORCH <<'EOF' && pass || fail "results.tsv or the SVG"
import sys, xml.etree.ElementTree as ET
out, torch = sys.argv[1], sys.argv[2] == "1"
rows = [l.rstrip("\n").split("\t") for l in open(out + "/results.tsv")]
head, rows = rows[0], [dict(zip(rows[0], r)) for r in rows[1:]]
runs = ["nmt-attention", "nmt-none", "nmt-transformer"] + (
    ["torch-attention", "torch-transformer"] if torch else [])
for run in runs:
    mine = [r for r in rows if r["run"] == run]
    assert any(r["kind"] == "final" for r in mine), run
    assert 1 <= sum(r["kind"] == "point" for r in mine) <= 3, run   # --quick: at most 3
    for r in mine:
        for k in ("greedy_bleu", "greedy_bleu_lc", "greedy_chrf", "beam_bleu", "beam_bleu_lc",
                  "beam_chrf", "minutes"):
            float(r[k])
svg = ET.parse(out + "/bleu-vs-time.svg").getroot()
ns = "{http://www.w3.org/2000/svg}"
lines = svg.findall(ns + "polyline")
assert len(lines) == 2 * len(runs), len(lines)
texts = " ".join(t.text or "" for t in svg.iter(ns + "text"))
assert "wall-clock minutes" in texts and "PyTorch" in texts or not torch
EOF
if [ $TORCH = 1 ]; then
    echo "das ist ein test ." >"$TMP/raw.de"
    for d in torch torch-transformer; do
        snap=$(ls "$OUT/$d"/snapshot-*.safetensors | head -n 1)
        expect_ok "nmt reads $d's snapshot" "$NMT" info "$snap"
        grep -q "subwords" "$TMP/out" && pass || fail "$d's snapshot keeps the subword model"
        expect_ok "nmt translates raw text with $d's snapshot" "$NMT" translate -m "$snap" \
            -i "$TMP/raw.de" -q
    done
    # each PyTorch run's curves as nmt plot reads them: a validation BLEU at
    # every scored snapshot's step, drawn beside the nmt run it followed
    for d in torch:attention torch-transformer:transformer; do
        IFS=: read -r d nmtrun <<<"$d"
        $PY - "$OUT" "$d" <<'EOF' && pass || fail "$d.tsv: not the snapshots' validation BLEU"
import csv, sys
out, d = sys.argv[1], sys.argv[2]
run = {"torch": "torch-attention", "torch-transformer": "torch-transformer"}[d]
rows = lambda f: list(csv.DictReader(open(f), delimiter="\t"))
curve = rows(out + "/" + d + ".tsv")
scored = {int(r["step"]): r["valid_bleu"] for r in rows(out + "/results.tsv")
          if r["run"] == run and r["kind"] == "point"}
drawn = {int(r["step"]): r["valid_bleu"] for r in curve if r["valid_bleu"]}
assert drawn == scored and scored, (drawn, scored)
steps = [int(r["step"]) for r in curve]
assert steps == sorted(set(steps)) and all(float(r["loss"]) > 0 for r in curve)
EOF
        expect_ok "nmt plot draws $d.tsv beside $nmtrun" "$NMT" plot "$OUT/$nmtrun" \
            "$OUT/$d.tsv" -o "$TMP/$d-curves.svg"
        grep -q ">$d[ <]" "$TMP/$d-curves.svg" && pass || fail "the plot's legend names $d"
    done
    for r in torch-attention torch-transformer; do
        grep -q "^$r" "$OUT/eval/scores.tsv" && pass || fail "$r's models were scored"
    done
fi
# -- runs of two sittings, one report (--with) --
# The output cut in two as if made on two days: A without the Transformer's
# runs, B with them only (another date and commit); A's report --with B has
# every row and figure of the whole output's, and names both outputs.
A=$TMP/sitting-a
B=$TMP/sitting-b
$PY - "$OUT" "$A" "$B" <<'EOF' && pass || fail "cutting the output in two"
import os, sys
out, a, b = sys.argv[1:]
theirs = lambda name: "transformer" in name      # B's runs, folders and keys
for d, keep in ((a, lambda n: not theirs(n)), (b, theirs)):
    os.makedirs(d + "/eval")
    open(d + "/.multi30k-experiment", "w").close()
    rows = open(out + "/eval/scores.tsv").read().splitlines()
    with open(d + "/eval/scores.tsv", "w") as f:
        f.write("\n".join(rows[:1] + [r for r in rows[1:] if keep(r.split("\t")[0])]) + "\n")
    with open(d + "/info.tsv", "w") as f:
        for line in open(out + "/info.tsv"):
            k, v = line.rstrip("\n").split("\t", 1)
            if k == "runs":
                v = " ".join(r for r in v.split() if keep(r))
            elif "." in k and not keep(k.split(".", 1)[1]):
                continue
            elif d == b and k in ("date", "commit"):
                v = {"date": "2001-02-03 04:05 UTC", "commit": "abcdef0"}[k]
            f.write("%s\t%s\n" % (k, v))
    for sub in os.listdir(out):
        if os.path.isdir(out + "/" + sub) and sub != "eval" and keep(sub):
            os.symlink(os.path.abspath(out + "/" + sub), d + "/" + sub)
    for name in os.listdir(out + "/eval"):   # the runs' BLEU by length
        if name.endswith(".by-length.json") and keep(name.split(".")[0]):
            os.symlink(os.path.abspath(out + "/eval/" + name), d + "/eval/" + name)
EOF
expect_ok "report A --with B" $PY "$REPORT" report "$A" --with "$B"
$PY - "$OUT" "$A" "$B" $TORCH <<'EOF' && pass || fail "A --with B: not the whole output's report"
import re, sys
out, a, b, torch = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
rows = lambda d: sorted(open(d + "/results.tsv").read().splitlines())
assert rows(a) == rows(out), "results.tsv"
table = lambda d: sorted(l for l in open(d + "/results.md")
                         if l.startswith(("| nmt", "| PyTorch", "| source words"))
                         or re.match(r"\| [0-9]+(-[0-9]+|\+) \(", l))
assert table(a) == table(out) and len(table(a)) > 8, "the tables of results.md"
md = open(a + "/results.md").read()
assert "2 outputs" in md and "- commit: " in md, "the sittings"
line_b = [l for l in md.splitlines() if l.startswith("  - " + b)]
assert len(line_b) == 1 and "nmt, Transformer" in line_b[0] and "abcdef0" in line_b[0] \
    and "2001-02-03 04:05 UTC" in line_b[0] and "attention" not in line_b[0], line_b
if torch:
    assert open(a + "/torch-transformer.tsv").read() == open(out + "/torch-transformer.tsv").read()
svg = lambda d, f="bleu-vs-time": open(d + "/" + f + ".svg").read()
assert svg(a).count("<polyline") == svg(out).count("<polyline") >= 6, "the plot's lines"
assert svg(a, "bleu-by-length") == svg(out, "bleu-by-length"), "the by-length plot"
EOF
expect_fail "--with: a run in both" "has a run transformer already" \
    "$ROOT/scripts/experiments/multi30k-experiment" --runs transformer --with "$B" --out "$TMP/x" --from "$C"
expect_fail "--with: not an output" "not a finished output" \
    "$ROOT/scripts/experiments/multi30k-experiment" --runs none --with "$C" --out "$TMP/x" --from "$C"
expect_fail "--with: the same folder as --out" "is --out too" \
    "$ROOT/scripts/experiments/multi30k-experiment" --runs transformer --with "$A" --out "$A" --from "$C"
[ -s "$A/results.md" ] && pass || fail "--with and --out the same: the output was removed"
expect_fail "report --with: a run in both" "also in" $PY "$REPORT" report "$A" --with "$A"

# -- En→De: the same files the other way round, in every command, the
# tokenized reference and the titles --
EN=$TMP/en-de
if NMT_BUILD_DIR=$BUILD NMT_M30K_TEST_TRAIN_OPTS="${TINY[*]} --subwords 120 --valid-every 20" \
    NMT_M30K_TEST_TRANSFORMER_OPTS="${TF_TINY[*]} --warmup 20 --valid-every 20" \
    "$ROOT/scripts/experiments/multi30k-experiment" --quick --minutes 0.05 --from "$C" --out "$EN" \
    --direction en-de --runs attention,transformer --skip-torch >"$TMP/en-de.out" 2>&1; then pass; else
    fail "scripts/experiments/multi30k-experiment --direction en-de: $(tail -n 8 "$TMP/en-de.out")"
fi
for key in cmd.init cmd.nmt-attention cmd.init-transformer cmd.nmt-transformer; do
    grep -q "^$key"$'\t'".* train --src $C/train.en.gz --tgt $C/train.de.gz --valid-src $C/val.en.gz --valid-tgt $C/val.de.gz " \
        "$EN/info.tsv" && pass || fail "en-de: $key is not English to German"
    grep -Fq "$(awk -F'\t' -v k=$key '$1 == k { print $2 }' "$EN/info.tsv")" "$EN/results.md" &&
        pass || fail "en-de: results.md has not $key's command"
done
for want in "# Multi30k En→De" "- direction: En→De" "the reference is test2016's \`test_2016_flickr.de.gz\`" \
    "--src test_2016_flickr.en.gz" "against Multi30k's own \`test_2016_flickr.lc.norm.tok.de\`" \
    "test_2016_flickr.en 40/40 lines, test_2016_flickr.de 40/40 lines" \
    "Reference $C/tok/test_2016_flickr.lc.norm.tok.de"; do
    grep -Fq -- "$want" "$EN/results.md" && pass || fail "en-de: results.md does not say '$want'"
done
for f in bleu-vs-time bleu-by-length; do
    grep -q "En→De test2016" "$EN/$f.svg" && pass || fail "en-de: $f.svg's title"
done
tok_check "$EN" de
expect_fail "--with: the other direction" "is en-de, this one de-en" \
    "$ROOT/scripts/experiments/multi30k-experiment" --runs none --with "$EN" --out "$TMP/x" --from "$C"
expect_fail "report --with: the other direction" "its direction is en-de" \
    $PY "$REPORT" report "$B" --with "$EN"
expect_fail "--direction: unknown" "de-en or en-de, not 'fr-en'" \
    "$ROOT/scripts/experiments/multi30k-experiment" --direction fr-en --out "$TMP/x" --from "$C"

# --tok-bleu insists: before any training, a pipeline that does not remake
# the tok files (one line of val's changed), or no tok files, stop the script
cp -r "$C" "$TMP/badtok"
sed -i '3s/^/x /' "$TMP/badtok/tok/val.lc.norm.tok.en"
expect_fail "--tok-bleu: the tok files not remade" \
    "does not remake Multi30k's tok files \(.*val\.en 39/40 lines" env NMT_BUILD_DIR="$BUILD" \
    "$ROOT/scripts/experiments/multi30k-experiment" --tok-bleu --tok-from "$TMP/badtok" --runs none \
    --from "$C" --out "$TMP/x"
[ ! -e "$TMP/x/none" ] && pass || fail "--tok-bleu: trained all the same"
expect_fail "--tok-bleu: no tok files" "--tok-bleu: no $TMP/nowhere/moses/tokenizer/lowercase\.perl" \
    env NMT_BUILD_DIR="$BUILD" "$ROOT/scripts/experiments/multi30k-experiment" --tok-bleu \
    --tok-from "$TMP/nowhere" --runs none --from "$C" --out "$TMP/x"

# --runs: names checked, a PyTorch run only with the run it follows
expect_fail "--runs: unknown run" "unknown run 'rnn'" "$ROOT/scripts/experiments/multi30k-experiment" \
    --runs attention,rnn --out "$TMP/x" --from "$C"
expect_fail "--runs: torch-transformer alone" "follows the transformer run" \
    "$ROOT/scripts/experiments/multi30k-experiment" --runs torch-transformer --out "$TMP/x" --from "$C"
expect_fail "--runs: a PyTorch run with --skip-torch" "skip-torch" \
    "$ROOT/scripts/experiments/multi30k-experiment" --runs attention,torch-rnn --skip-torch --out "$TMP/x" \
    --from "$C"
expect_fail "--out refuses a folder it did not write" "did not write" env NMT_BUILD_DIR="$BUILD" \
    "$ROOT/scripts/experiments/multi30k-experiment" --out "$C" --from "$C" --skip-torch
finish
