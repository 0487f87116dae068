/* libFuzzer: IDX files (nn/data), the input as the training images of a
 * directory whose other three files are valid. See entry.h. */
#include <sys/stat.h>
#include <unistd.h>

#include "../../nn/data.h"
#include "entry.h"

/* 4 labels, and 4 images of 2x3 for the test split. */
static const uint8_t labels[] = {0, 0, 8, 1, 0, 0, 0, 4, 0, 1, 2, 3};
static const uint8_t images[] = {0, 0, 8, 3, 0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0, 3,
                                 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                                 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char dir[64], path[128];
    snprintf(dir, sizeof dir, "/tmp/strata-libfuzzer-idx-%ld", (long)getpid());
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/train-labels-idx1-ubyte", dir);
    fuzz_entry_write(path, labels, sizeof labels);
    snprintf(path, sizeof path, "%s/t10k-labels-idx1-ubyte", dir);
    fuzz_entry_write(path, labels, sizeof labels);
    snprintf(path, sizeof path, "%s/t10k-images-idx3-ubyte", dir);
    fuzz_entry_write(path, images, sizeof images);
    snprintf(path, sizeof path, "%s/train-images-idx3-ubyte", dir);
    fuzz_entry_write(path, data, size);
    struct data d;
    struct err e = {0};
    int rc = data_load(dir, 1, &d, &e);
    if (rc == 0) data_release(&d);
    fuzz_entry_check(rc, &e);
    return 0;
}
