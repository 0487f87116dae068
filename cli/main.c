/* strata: placeholder entry point until the command table lands. */
#include <stdio.h>

int main(void)
{
    fputs("strata: the command line is being built (issue 3)\n", stderr);
    return 1;
}
