/* The grid of charts (small multiples) that nmt plot draws: well-formed,
 * one polyline per series and panel, round ticks on linear and log axes,
 * marks apart from the lines, one legend. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"
#include "cli/draw/svg.h"
#include "test_common.h"
#include "xml_check.h"

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)); p++)
        n++;
    return n;
}

/* Draws the grid into a string (freed by the caller). Tick labels are found
 * by their text, so each panel's values give ticks that no other has. */
static char *draw(const nmt_svg_panel *panels, int n, int columns, const char *mark_label,
                  int *rc)
{
    static char *buf;
    static size_t len;
    buf = NULL;
    len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    *rc = nmt_svg_panel_grid(f, "Runs <a & b>", panels, n, columns, mark_label);
    fclose(f);
    return buf;
}

static const double steps[] = {100, 200, 300, 400};
static const double ppl_a[] = {310, 120, 40, 9}, ppl_b[] = {280, 150, NAN, 12};
static const double bleu_a[] = {1.5, 7, 12.5, 17}, bleu_b[] = {1, 5, 9, 14};
static const double mark_x[] = {400}, mark_y[] = {4};

START_TEST(grid_is_well_formed_with_a_line_per_series_and_panel)
{
    nmt_svg_series ppl[2] = {{"run-a", 4, steps, ppl_a}, {"run <b>", 4, steps, ppl_b}};
    nmt_svg_series bleu[2] = {{"run-a", 4, steps, bleu_a}, {"run <b>", 4, steps, bleu_b}};
    nmt_svg_series marks[2] = {{"run-a", 1, mark_x, mark_y}, {"run <b>", 0, NULL, NULL}};
    nmt_svg_panel panels[2] = {
        {.chart = {.title = "validation perplexity", .x_title = "step", .series = ppl,
                   .n_series = 2},
         .log_y = 1, .marks = marks},
        {.chart = {.title = "validation BLEU", .x_title = "step", .series = bleu, .n_series = 2}},
    };
    int rc;
    char *s = draw(panels, 2, 2, "averaged", &rc);
    ck_assert_int_eq(rc, NMT_OK);
    const char *why = "";
    ck_assert_msg(xml_check(s, &why) > 0, "not well-formed: %s", why);
    ck_assert_ptr_nonnull(strstr(s, ">Runs &lt;a &amp; b&gt;</text>"));
    ck_assert_ptr_nonnull(strstr(s, ">validation perplexity</text>"));
    /* one polyline per series and panel, but the NaN splits run b's
     * perplexity in two */
    ck_assert_int_eq(count(s, "<polyline"), 2 * 2 + 1);
    /* every panel clips to its own rectangle */
    ck_assert_int_eq(count(s, "<clipPath id=\"plot0\">"), 1);
    ck_assert_int_eq(count(s, "<clipPath id=\"plot1\">"), 1);
    ck_assert_int_eq(count(s, "url(#plot0)"), 2);
    ck_assert_int_eq(count(s, "url(#plot1)"), 2);
    /* the log axis runs from 2 to 500 (the mark's 4 to 310, widened to 1-2-5
     * values): ticks 2 5 10 20 50 100 200 500, and no 1 or 1000 */
    static const char *const log_ticks[] = {">2</text>", ">5</text>", ">10</text>", ">20</text>",
                                            ">50</text>", ">200</text>", ">500</text>"};
    for (size_t k = 0; k < sizeof log_ticks / sizeof *log_ticks; k++)
        ck_assert_msg(strstr(s, log_ticks[k]), "no tick %s", log_ticks[k]);
    ck_assert_ptr_null(strstr(s, ">1000</text>"));
    /* the BLEU axis from 0 in steps of 2 to 18 */
    ck_assert_ptr_nonnull(strstr(s, ">18</text>"));
    /* one mark (a hollow square), one legend of the two runs plus the marks */
    ck_assert_int_eq(count(s, "fill=\"#ffffff\" stroke-width=\"2\"/>"), 1);
    ck_assert_int_eq(count(s, ">run &lt;b&gt;</text>"), 1);
    ck_assert_int_eq(count(s, ">averaged</text>"), 1);
    free(s);
}
END_TEST

/* Over more than three decades a log axis ticks at decades only. */
START_TEST(log_axis_over_many_decades_ticks_decades)
{
    static const double x[] = {1, 2, 3}, y[] = {3, 2000, 90000};
    nmt_svg_series line = {"r", 3, x, y};
    nmt_svg_panel p = {.chart = {.series = &line, .n_series = 1}, .log_y = 1};
    int rc;
    char *s = draw(&p, 1, 3, NULL, &rc);
    ck_assert_int_eq(rc, NMT_OK);
    static const char *const ticks[] = {">1</text>", ">10</text>", ">100</text>",
                                        ">1000</text>", ">10000</text>", ">100000</text>"};
    for (size_t k = 0; k < sizeof ticks / sizeof *ticks; k++)
        ck_assert_msg(strstr(s, ticks[k]), "no tick %s", ticks[k]);
    ck_assert_ptr_null(strstr(s, ">20</text>"));
    ck_assert_ptr_null(strstr(s, ">50000</text>"));
    /* no mark label without marks */
    ck_assert_int_eq(count(s, "<rect"), 3); /* the background, the clip and the frame */
    free(s);
}
END_TEST

START_TEST(long_series_have_no_point_markers)
{
    double x[200], y[200];
    for (int k = 0; k < 200; k++) {
        x[k] = k;
        y[k] = 5 - k / 50.0;
    }
    nmt_svg_series line = {"loss", 200, x, y};
    nmt_svg_panel p = {.chart = {.series = &line, .n_series = 1}};
    int rc;
    char *s = draw(&p, 1, 1, NULL, &rc);
    ck_assert_int_eq(rc, NMT_OK);
    ck_assert_int_eq(count(s, "<polyline"), 1);
    ck_assert_int_eq(count(s, "<circle"), 1); /* the legend's */
    free(s);
}
END_TEST

START_TEST(bad_grids_are_refused)
{
    static const double x[] = {1}, y[] = {1};
    nmt_svg_series one = {"a", 1, x, y}, two[2] = {{"a", 1, x, y}, {"b", 1, x, y}};
    nmt_svg_panel p[2] = {{.chart = {.series = &one, .n_series = 1}},
                          {.chart = {.series = two, .n_series = 2}}};
    int rc;
    free(draw(p, 2, 2, NULL, &rc));
    ck_assert_int_eq(rc, NMT_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "same series"));
    free(draw(p, 0, 2, NULL, &rc));
    ck_assert_int_eq(rc, NMT_ERR_ARG);
    nmt_svg_series no_points = {"a", 3, NULL, NULL};
    nmt_svg_panel q = {.chart = {.series = &no_points, .n_series = 1}};
    free(draw(&q, 1, 1, NULL, &rc));
    ck_assert_int_eq(rc, NMT_ERR_ARG);
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("svg");
    TCase *tc = tcase_create("grid");
    tcase_add_test(tc, grid_is_well_formed_with_a_line_per_series_and_panel);
    tcase_add_test(tc, log_axis_over_many_decades_ticks_decades);
    tcase_add_test(tc, long_series_have_no_point_markers);
    tcase_add_test(tc, bad_grids_are_refused);
    suite_add_tcase(s, tc);
    return s;
}
