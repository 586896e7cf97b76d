/* h5_headers.h — a results file's object headers checked before HDF5 decodes them (see
 * h5_headers.c). */
#ifndef TF_H5_HEADERS_H
#define TF_H5_HEADERS_H

#include <hdf5.h>
#include <stdbool.h>
#include <stdint.h>

#include "error.h"

/* Every object reachable from the root: each attribute message of its header holds its name,
 * datatype, dataspace and data.  0, or -1 with err "'PATH': corrupt or not a twofold results
 * file: the header of 'NAME' is damaged ...". */
int tf_h5_check_headers(hid_t file, const char *path, tf_error *err);

#endif
