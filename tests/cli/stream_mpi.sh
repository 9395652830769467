#!/usr/bin/env bash
# A streamed corpus (--shuffle-buffer) under mpirun (src/train/stream_blocks.c,
# dist.c): every process reads the same blocks and plans the same batches,
# and trains on its share of each, so 2 processes take the steps of one
# within float rounding (SGD, 1e-5), with steps of 2 batches of up to 200
# target tokens that cross blocks; a run of 2 processes stopped mid-epoch
# and resumed, or killed with kill -9 and resumed, ends with the
# uninterrupted run's bits.
. "$(dirname "$0")/lib.sh"
if [ "${NMT_HAVE_MPI:-0}" != 1 ]; then
    echo "SKIP: this build has no MPI" >&2
    exit 77
fi
command -v mpirun >/dev/null || { echo "FAIL: the build has MPI but mpirun is missing" >&2; exit 1; }
ROOT=${NMT_SOURCE_ROOT:?}
DIFF=(python3 "$ROOT/tests/st_diff.py")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl=self,vader
MPI=(mpirun --oversubscribe -np 2)
cd "$TMP" || exit 1
zcat "$ROOT/corpora/toy/train.src.gz" | head -n 1200 | gzip >s.gz
zcat "$ROOT/corpora/toy/train.tgt.gz" | head -n 1200 | gzip >t.gz
C=(train --arch rnn --src s.gz --tgt t.gz --emb 16 --hidden 16 --att-dim 16 --out-dim 16 --batch-size 16
   --threads 1 --dropout 0 --label-smoothing 0 --optimizer sgd --lr 0.5 -q
   --shuffle-buffer 200 --accumulate 2 --batch-tokens 200)

expect_ok "one process" "$NMT" "${C[@]}" --max-steps 40 --out one
expect_ok "two processes" "${MPI[@]}" "$NMT" "${C[@]}" --max-steps 40 --out two
if out=$("${DIFF[@]}" one/checkpoint.safetensors two/checkpoint.safetensors 1e-5); then
    pass; echo "2 processes against 1: largest relative difference $out" >&2
else fail "2 processes against 1: $out"; fi

L=("${C[@]}" --epochs 2 --save-every 3)
expect_ok "two processes, two epochs" "${MPI[@]}" "$NMT" "${L[@]}" --out full
expect_ok "stop at step 23" "${MPI[@]}" "$NMT" "${L[@]}" --max-steps 23 --out ext
expect_ok "resume" "${MPI[@]}" "$NMT" train -q --resume ext --max-steps 100000
if out=$("${DIFF[@]}" full/checkpoint.safetensors ext/checkpoint.safetensors --same); then pass
else fail "stop at 23 and resume under mpirun: $out"; fi

# kill -9 of one process once a checkpoint past step 10 is written
nmt_pids() { pgrep -f -- "$1\$" | while read -r p; do [ "$(cat /proc/$p/comm 2>/dev/null)" = nmt ] && echo $p; done; }
"${MPI[@]}" "$NMT" "${L[@]}" --out k9 2>/dev/null &
job=$!
for _ in $(seq 1 2000); do
    s=$(python3 -c 'import json,struct,sys; b=open(sys.argv[1],"rb").read(); n=struct.unpack("<Q",b[:8])[0]; print(json.loads(b[8:8+n])["__metadata__"]["state.step"])' k9/checkpoint.safetensors 2>/dev/null || echo 0)
    [ "$s" -ge 10 ] && break
    sleep 0.01
done
victim=$(nmt_pids "--out k9" | tail -n 1)
[ -n "$victim" ] && kill -9 "$victim"
wait $job 2>/dev/null
s=$(python3 -c 'import json,struct,sys; b=open(sys.argv[1],"rb").read(); n=struct.unpack("<Q",b[:8])[0]; print(json.loads(b[8:8+n])["__metadata__"]["state.step"])' k9/checkpoint.safetensors 2>/dev/null || echo 0)
echo "kill -9 landed with the checkpoint at step $s" >&2
expect_ok "resume after kill -9" "${MPI[@]}" "$NMT" train -q --resume k9
if out=$("${DIFF[@]}" full/checkpoint.safetensors k9/checkpoint.safetensors --same); then pass
else fail "kill -9 + resume under mpirun: $out"; fi

finish
