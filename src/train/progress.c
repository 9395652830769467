/* Progress text: the live progress line and durations. Only formats
 * strings; the command line decides where (and whether) they go. (log.tsv's
 * rows are runlog.c's.) */
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "nmt/progress.h"

double nmt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int nmt_format_duration(char *buf, size_t cap, double seconds)
{
    if (!isfinite(seconds) || seconds < 0)
        return snprintf(buf, cap, "?");
    if (seconds < 60)
        return snprintf(buf, cap, "%.1fs", seconds);
    long s = lround(seconds);
    if (s < 3600)
        return snprintf(buf, cap, "%ldm%02lds", s / 60, s % 60);
    return snprintf(buf, cap, "%ldh%02ldm%02lds", s / 3600, s / 60 % 60, s % 60);
}

void nmt_progress_start(nmt_progress *p, int64_t step, double interval)
{
    p->t0 = nmt_now();
    p->step0 = step;
    p->last_draw = -1;
    p->interval = interval;
}

int nmt_progress_due(nmt_progress *p, double now)
{
    if (p->last_draw >= 0 && now - p->last_draw < p->interval)
        return 0;
    p->last_draw = now;
    return 1;
}

double nmt_progress_eta(const nmt_progress *p, const nmt_train_status *st, double now)
{
    int64_t done = st->step - p->step0;
    double by_steps = -1;
    if (done > 0 && st->total_steps > 0 && now > p->t0) {
        int64_t left = st->total_steps - st->step;
        by_steps = left <= 0 ? 0 : (now - p->t0) / (double)done * (double)left;
    }
    if (st->time_limit_s <= 0)
        return by_steps;
    /* elapsed_s is the run's time at the step this line is drawn for */
    double by_time = fmax(0, st->time_limit_s - st->elapsed_s);
    return by_steps < 0 || by_time < by_steps ? by_time : by_steps;
}

int nmt_progress_line(char *buf, size_t cap, const nmt_progress *p,
                      const nmt_train_status *st, double now)
{
    char eta[32], total[32] = "";
    nmt_format_duration(eta, sizeof eta, nmt_progress_eta(p, st, now));
    if (st->total_steps > 0)
        snprintf(total, sizeof total, "/%lld", (long long)st->total_steps);
    return snprintf(buf, cap, "epoch %d | step %lld%s | loss %.3f | %.0f tok/s | ETA %s",
                    st->epoch, (long long)st->step, total, st->loss, st->tok_per_s, eta);
}
