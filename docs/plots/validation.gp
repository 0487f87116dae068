# strata: predicted against measured step time, a point per run, from the data in validation.dat.
# Draw it again in this directory:  gnuplot validation.gp   (PNG and SVG files)
#   or in the terminal:            gnuplot -e "term='dumb'" validation.gp
if (!exists("term")) term = "files"
if (!exists("cols")) cols = 100
formats = (term eq "dumb") ? "dumb" : "png svg"

do for [fmt in formats] {
    if (fmt eq "png") {
        if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
            set terminal pngcairo size 900,900 font "sans,10"
        } else {
            set terminal png size 900,900
        }
        set output 'validation.png'
    }
    if (fmt eq "svg") {
        set terminal svg size 900,900 dynamic font "sans,10"
        set output 'validation.svg'
    }
    if (fmt eq "dumb") {
        set terminal dumb size cols,40
        set output
    }
    reset
    set termoption noenhanced
    set encoding utf8
    set title 'Simulated against measured step time' . "\n" . 'predicted vs measured step time (/tmp/local.profile)'
    set xlabel 'measured step time (ms)'
    set ylabel 'predicted step time (ms)'
    set size square
    set grid
    set key top left
    set xrange [0:17.64718125]
    set yrange [0:17.64718125]
    plot x with lines dt 2 lc rgb 'gray40' title 'perfect prediction (y = x)', \
         'validation.dat' using ($2*1000):($3*1000) with points pt 7 ps 1.5 lt 1 title 'a run (label: strategy, prediction error)', \
         '' using ($2*1000):($3*1000):(sprintf('%s %+.0f%%', strcol(1), $4)) with labels left offset char 1,0.5 notitle
    set output
}
