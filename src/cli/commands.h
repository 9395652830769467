/* The subcommands. Each parses its own options (getopt_long), prints its help
 * on stdout for --help, and returns the process exit code: 0 success,
 * 1 failure, 2 usage error. */
#ifndef NMT_CLI_COMMANDS_H
#define NMT_CLI_COMMANDS_H

int cmd_train(int argc, char **argv);
int cmd_translate(int argc, char **argv);
int cmd_score(int argc, char **argv);
int cmd_bleu(int argc, char **argv);
int cmd_align(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_average(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_serve(int argc, char **argv);

#endif
