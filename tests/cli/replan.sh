# A resumed run whose limits changed under a linear decay says what its
# schedule now does (src/cli/cmd_train.c, describe_replanned): the line to 0
# was planned to the checkpoint's end and now runs to the new one, from the
# lr the new line gives the next step. Said once, not with -q, not when the
# limits stay, not for a schedule that has no end (rsqrt).
. "$(dirname "$0")/lib.sh"
TOY=${NMT_SOURCE_ROOT:?}/corpora/toy
cd "$TMP" || exit 1
zcat "$TOY/train.src.gz" | head -n 300 >s
zcat "$TOY/train.tgt.gz" | head -n 300 >t
C=(train --src s --tgt t --d-model 16 --heads 2 --ff 32 --layers 1 --batch-size 16 --threads 1
   --report-every 1)

expect_ok "a linear decay to step 10" "$NMT" "${C[@]}" -q --max-steps 10 --epochs 100 --out lin
# extended to 20 steps: the warm-up is the first quarter (5 steps), so step
# 11 takes 4e-3 * (1 - 10/20) = 0.002
"$NMT" train --resume lin --max-steps 20 >out 2>err
pat='^lr: re-planned: the line to 0 was planned to end at the nearest of 10 steps, 100 epochs and now ends at the nearest of 20 steps, 100 epochs: step 11 takes lr 0\.002 \(step 10 took 0\.0004\) and the line falls from there to 0'
if [ "$(grep -c '^lr: re-planned' err)" -eq 1 ] && grep -Eq "$pat" err; then pass; else
    fail "extension: $(grep '^lr' err)"; fi
# the log says the same lr at the first row after the resume
lr11=$(awk -F'\t' '$1 == 11 { print $3 }' lin/log.tsv)
[ "$lr11" = 0.002 ] && pass || fail "log.tsv's lr at step 11 is '$lr11', not 0.002"

# with -q nothing; the same limits again: nothing
"$NMT" "${C[@]}" -q --max-steps 10 --epochs 100 --out lin2 2>/dev/null
"$NMT" train -q --resume lin2 --max-steps 20 >out 2>err
[ ! -s err ] && pass || fail "-q: $(cat err)"
"$NMT" "${C[@]}" -q --max-steps 10 --epochs 100 --out lin3 2>/dev/null
kill_free() { "$NMT" train --resume lin3 --max-steps 10 --epochs 100 >out 2>err; }
kill_free
grep -q 're-planned' err && fail "the same limits: $(grep '^lr' err)" || pass

# an epoch limit raised: said too
"$NMT" "${C[@]}" -q --max-steps 10 --epochs 100 --out lin4 2>/dev/null
"$NMT" train --resume lin4 --max-steps 10 --epochs 200 >out 2>err
grep -q 'now ends at the nearest of 10 steps, 200 epochs' err && pass ||
    fail "epochs raised: $(grep '^lr' err)"

# rsqrt has no end to plan: nothing to say
expect_ok "an rsqrt run" "$NMT" "${C[@]}" -q --lr-schedule rsqrt --max-steps 10 --out rs
"$NMT" train --resume rs --max-steps 20 >out 2>err
grep -q 're-planned' err && fail "rsqrt: $(grep '^lr' err)" || pass

echo "$n_pass passed, $n_fail failed"
[ "$n_fail" -eq 0 ]
