/* cli.h — the `twofold` command line (see `twofold --help`). */
#ifndef TF_CLI_H
#define TF_CLI_H

int tf_cli_main(int argc, char **argv);

#endif
