package render

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"io"
	"strings"
)

// Picture size of image exports: small, 16:9.
const picW, picH = 480, 270

// picture draws a slide-like card: a title band and one grey bar per line
// of text, as long as the line. The text itself travels in the file's
// metadata (a PNG tEXt chunk, a JPEG comment), since the emulator has no
// font to draw it with.
func picture(lines int, lineLens func(int) int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, picW, picH))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.RGBA{0xff, 0xff, 0xff, 0xff}}, image.Point{}, draw.Src)
	draw.Draw(img, image.Rect(0, 0, picW, 48), &image.Uniform{color.RGBA{0x42, 0x85, 0xf4, 0xff}}, image.Point{}, draw.Src)
	for i := 0; i < lines && 64+i*18 < picH-12; i++ {
		w := min(24+lineLens(i)*6, picW-48)
		y := 64 + i*18
		draw.Draw(img, image.Rect(24, y, w, y+10), &image.Uniform{color.RGBA{0x9a, 0xa0, 0xa6, 0xff}}, image.Point{}, draw.Src)
	}
	return img
}

func pictureOf(title string, lines []string) (*image.RGBA, string) {
	img := picture(len(lines), func(i int) int { return len([]rune(lines[i])) })
	return img, strings.Join(append([]string{title}, lines...), "\n")
}

// writePNG encodes img with a tEXt "Description" chunk holding text.
func writePNG(w io.Writer, img image.Image, title, text string) error {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return err
	}
	b := buf.Bytes()
	// The 8-byte signature and the 25-byte IHDR chunk come first; text
	// chunks may follow IHDR.
	const afterIHDR = 8 + 25
	var out bytes.Buffer
	out.Write(b[:afterIHDR])
	writeTextChunk(&out, "Title", title)
	writeTextChunk(&out, "Description", text)
	out.Write(b[afterIHDR:])
	_, err := w.Write(out.Bytes())
	return err
}

// writeTextChunk writes a PNG tEXt chunk; tEXt is Latin-1, so other runes become '?'.
func writeTextChunk(w *bytes.Buffer, key, text string) {
	data := []byte(key + "\x00")
	for _, r := range text {
		if r > 0xff {
			r = '?'
		}
		data = append(data, byte(r))
	}
	var hdr [8]byte
	binary.BigEndian.PutUint32(hdr[:4], uint32(len(data)))
	copy(hdr[4:], "tEXt")
	w.Write(hdr[:])
	w.Write(data)
	crc := crc32.NewIEEE()
	crc.Write(hdr[4:])
	crc.Write(data)
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc.Sum32())
	w.Write(sum[:])
}

// writeJPEG encodes img with a COM segment holding text (UTF-8).
func writeJPEG(w io.Writer, img image.Image, text string) error {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 85}); err != nil {
		return err
	}
	b := buf.Bytes()
	if len(text) > 60000 {
		text = text[:60000]
	}
	var out bytes.Buffer
	out.Write(b[:2]) // SOI
	out.Write([]byte{0xff, 0xfe})
	var n [2]byte
	binary.BigEndian.PutUint16(n[:], uint16(len(text)+2))
	out.Write(n[:])
	out.WriteString(text)
	out.Write(b[2:])
	_, err := w.Write(out.Bytes())
	return err
}

// writeSVG draws the title and each line as SVG text.
func writeSVG(w io.Writer, title string, lines []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">`, picW, picH, picW, picH)
	fmt.Fprintf(&b, `<title>%s</title><rect width="%d" height="%d" fill="#ffffff"/><rect width="%d" height="48" fill="#4285f4"/>`, xmlText(title), picW, picH, picW)
	fmt.Fprintf(&b, `<text x="24" y="32" font-family="Arial" font-size="20" fill="#ffffff">%s</text>`, xmlText(title))
	for i, line := range lines {
		fmt.Fprintf(&b, `<text x="24" y="%d" font-family="Arial" font-size="14" fill="#202124">%s</text>`, 74+i*18, xmlText(line))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func firstSlide(d Deck) Slide {
	if len(d.Slides) == 0 {
		return Slide{Title: d.Title}
	}
	return d.Slides[0]
}

// DeckPNG writes the first slide as a PNG, as Google's image export does.
func DeckPNG(w io.Writer, d Deck) error {
	s := firstSlide(d)
	img, text := pictureOf(s.Title, s.Body)
	return writePNG(w, img, d.Title, text)
}

// DeckJPEG writes the first slide as a JPEG.
func DeckJPEG(w io.Writer, d Deck) error {
	s := firstSlide(d)
	img, text := pictureOf(s.Title, s.Body)
	return writeJPEG(w, img, text)
}

// DeckSVG writes the first slide as SVG.
func DeckSVG(w io.Writer, d Deck) error {
	s := firstSlide(d)
	return writeSVG(w, s.Title, s.Body)
}

// DrawingPNG writes a drawing as a PNG.
func DrawingPNG(w io.Writer, d Drawing) error {
	img, text := pictureOf(d.Title, d.Lines)
	return writePNG(w, img, d.Title, text)
}

// DrawingJPEG writes a drawing as a JPEG.
func DrawingJPEG(w io.Writer, d Drawing) error {
	img, text := pictureOf(d.Title, d.Lines)
	return writeJPEG(w, img, text)
}

// DrawingSVG writes a drawing as SVG.
func DrawingSVG(w io.Writer, d Drawing) error { return writeSVG(w, d.Title, d.Lines) }
