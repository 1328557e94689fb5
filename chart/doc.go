// Package chart draws the project's server-side charts: a Canvas collects
// paths and text in pixel coordinates (with scales, ticks, grids and a
// legend to place them), and renders them as SVG, inline in a page or as
// a standalone file, or as PNG.
//
// It is the one way charts are drawn outside the browser: the capacity
// report embeds its charts inline, styled by the page's CSS through each
// mark's class, and 'forecaster backtest --out' writes standalone files,
// styled by the Canvas's own Styles, which both the SVG's stylesheet and
// the PNG rasterizer read. A chart is a handful of lines, areas, dots and
// labels, so a small display list suffices; it keeps a plotting library
// and its fonts out of the build (the PNG uses the Go fonts of
// golang.org/x/image). The status page draws its live charts in the
// browser and keeps its own code.
//
// Every coordinate written is finite: a Scale over an empty or constant
// range maps everything to its start, paths break at non-finite points,
// and marks with a non-finite position are left out. The output is a
// function of the marks alone, so the same chart renders to the same
// bytes.
package chart
