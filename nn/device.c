/* The registry of devices (nn/device.h): the one table a build's devices
 * are listed in, and the only code that knows which backends exist. */
#include <string.h>

#include "backends.h"

/* This build's devices. A backend that is not built is simply not listed. */
static const struct device *const devices[] = {
    &device_cpu,
#ifdef STRATA_HAVE_CUDA
    &device_cuda,
#endif
};
#define N_DEVICES (sizeof devices / sizeof devices[0])

const char *device_names(void)
{
    /* kept in step with devices[] by test_device */
#ifdef STRATA_HAVE_CUDA
    return "cpu,cuda";
#else
    return "cpu";
#endif
}

const struct device *device_find(const char *name, struct err *e)
{
    if (!name) name = "";
    for (size_t i = 0; i < N_DEVICES; i++)
        if (strcmp(devices[i]->name, name) == 0) return devices[i];
    if (strcmp(name, "cuda") == 0)
        err_set(e, ERR_INPUT,
                "--device: no cuda device in this build (devices: %s); use --device cpu",
                device_names());
    else
        err_set(e, ERR_INPUT, "--device: '%s' is not a device (devices: %s)", name,
                device_names());
    return NULL;
}

int device_check(const char *name, struct err *e)
{
    const struct device *d = device_find(name, e);
    if (!d) return e ? e->code : ERR_INPUT;
    return d->probe(e);
}
