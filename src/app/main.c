/* main.c — the twofold executable; everything happens in cli.c. */
#include "cli.h"

int main(int argc, char **argv) {
  return tf_cli_main(argc, argv);
}
