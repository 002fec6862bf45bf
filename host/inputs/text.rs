//! English-like text, generated: the default input of the histograms.
//!
//! The source histograms the complete works of Shakespeare (5 638 519 bytes, "about 5.7 million
//! characters"). This generator writes text of any size with the same kind of byte statistics,
//! the same on every machine: words drawn from a built-in list of common English (and some
//! Elizabethan) words with Zipf-like frequencies — the `k`-th word about as common as
//! `1 / (k + 2.7)` — sentences that start with a capital and end in `.`, `?`, `!` or `;`, commas,
//! verse lines of 35 to 64 characters that start with a capital, and paragraphs headed by a
//! speaker's name in capitals (`HAMLET.`), as the plays are. A few words carry a typographic
//! apostrophe (`’`, three bytes of UTF-8), so that bytes `>= 128` occur, as they do in the
//! source's file. Letter frequencies come out as English's: `e` the most common letter, then
//! `t`, `o`, `a`; a space about one byte in six.
//!
//! The text is made of [`CHUNK_BYTES`]-byte chunks, each a function of the seed, its index and
//! its length only, so the chunks are generated in parallel and the whole chunks of
//! `english_text(n, seed)` begin `english_text(m, seed)` for any `m >= n`. A chunk ends with
//! spaces and a newline where the next word would not fit, so no UTF-8 sequence is split.

/// The source's text size: the complete works of Shakespeare from Project Gutenberg, in bytes.
pub const DEFAULT_TEXT_BYTES: usize = 5_638_519;
/// The seed of the default text.
pub const DEFAULT_TEXT_SEED: u64 = 0x5368_616b_6573_7065;
/// Bytes per independently generated chunk: 1 MiB, enough chunks of a 5.6 MB text to use six
/// cores and of 1 GiB to use every core.
pub const CHUNK_BYTES: usize = 1 << 20;

/// Common words, most frequent first: the frequency of the `k`-th is proportional to
/// `1 / (k + ZIPF_OFFSET)`. `I` keeps its capital wherever it falls.
const WORDS: &[&str] = &[
    "the", "and", "I", "to", "of", "you", "a", "my", "me", "be", "in", "is", "he", "we", "not",
    "that", "your", "with", "his", "her", "she", "it", "for", "have", "thee", "are", "see", "here",
    "this", "but", "thou", "as", "so", "him", "will", "were", "there", "ever", "never", "these",
    "what", "thy", "all", "no", "do", "by", "shall", "if", "our", "lord", "on", "good", "now",
    "sir", "from", "come", "at", "they", "or", "which", "would", "more", "was", "then", "well",
    "how", "let", "love", "their", "them", "am", "hath", "man", "than", "one", "like", "upon",
    "go", "an", "may", "know", "make", "say", "yet", "must", "us", "should", "why", "such", "had",
    "out", "when", "give", "did", "who", "where", "king", "too", "some", "time", "speak", "doth",
    "art", "think", "take", "can", "tell", "heart", "most", "much", "death", "night", "life",
    "hear", "father", "great", "look", "many", "very", "eyes", "again", "world", "made", "honour",
    "blood", "true", "day", "old", "own", "fair", "could", "nothing", "master", "away", "name",
    "heaven", "sweet", "live", "down", "god", "word", "before", "nor", "whose", "came", "madam",
    "mine", "hand", "cannot", "both", "poor", "being", "every", "noble", "son", "friend", "little",
    "first", "men", "might", "young", "set", "way", "still", "leave", "call", "head", "better",
    "die", "fear", "till", "thing", "bear", "king's", "stand", "find", "pray", "soul", "nay",
    "hold", "face", "night's", "lady", "dead", "thus", "thought", "brother", "mother", "wife",
    "peace", "fool", "grace", "heard", "long", "nature", "sleep", "within", "gentle", "ay",
    "forth", "house", "eye", "answer", "bring", "against", "war", "hast", "canst", "crown",
    "sword", "gold", "light", "part", "place", "queen", "prince", "duke", "words", "sorrow", "joy",
    "fortune", "villain", "letter", "fire", "tears", "hope", "justice", "court", "majesty",
    "tongue", "break", "done", "wilt", "whom", "keep", "quick", "jest", "kiss", "next", "zeal",
    "exit", "amaze", "quarrel", "judge", "o’er", "e’en", "’tis",
];
/// The Zipf–Mandelbrot offset of [`WORDS`]' frequencies: English word counts fall off as
/// `1 / (rank + 2.7)` (Mandelbrot's fit).
const ZIPF_OFFSET: f64 = 2.7;
/// Speakers whose names head the paragraphs, most frequent first (the same law).
const SPEAKERS: &[&str] = &[
    "HAMLET",
    "KING",
    "QUEEN",
    "ROMEO",
    "JULIET",
    "MACBETH",
    "IAGO",
    "OTHELLO",
    "LEAR",
    "FOOL",
    "BRUTUS",
    "CASSIUS",
    "PORTIA",
    "FALSTAFF",
    "PROSPERO",
    "ROSALIND",
    "VIOLA",
    "HORATIO",
    "LADY MACBETH",
    "MERCUTIO",
    "NURSE",
    "FIRST LORD",
    "SECOND CITIZEN",
];
/// A name dropped into a sentence, in title case, instead of a word: one word in this many.
const NAME_EVERY: u32 = 60;
/// A comma after a word: one word in this many.
const COMMA_EVERY: u32 = 8;
/// Words per sentence: uniform in this range.
const SENTENCE_WORDS: (u32, u32) = (3, 18);
/// Sentences per paragraph: uniform in this range.
const PARAGRAPH_SENTENCES: (u32, u32) = (1, 7);
/// Characters per verse line before the next word starts a new one: uniform in this range.
const LINE_WIDTH: (u32, u32) = (35, 64);

/// SplitMix64, as a stream: deterministic, fast, and independent per chunk.
struct Rng(u64);

impl Rng {
    fn new(seed: u64, chunk: u64) -> Rng {
        let mut r = Rng(seed ^ chunk.wrapping_mul(0xA076_1D64_78BD_642F));
        r.next();
        r
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, (lo, hi): (u32, u32)) -> u32 {
        lo + (self.next() % (hi - lo + 1) as u64) as u32
    }
    /// True once in `n`.
    fn one_in(&mut self, n: u32) -> bool {
        self.next().is_multiple_of(n as u64)
    }
}

/// Cumulative Zipf–Mandelbrot weights of `n` ranks, scaled to `u64::MAX`: rank `k` is drawn
/// when a uniform 64-bit number falls in `[cdf[k-1], cdf[k])`.
fn zipf_cdf(n: usize) -> Vec<u64> {
    let weights: Vec<f64> = (0..n).map(|k| 1.0 / (k as f64 + ZIPF_OFFSET)).collect();
    let total: f64 = weights.iter().sum();
    let mut acc = 0.0;
    weights
        .iter()
        .map(|w| {
            acc += w / total;
            (acc * u64::MAX as f64) as u64
        })
        .collect()
}

fn draw(cdf: &[u64], rng: &mut Rng) -> usize {
    let u = rng.next();
    cdf.partition_point(|&c| c <= u).min(cdf.len() - 1)
}

/// One chunk being written: words go in while they fit, then the rest is padded.
struct Chunk<'a> {
    out: &'a mut [u8],
    len: usize,
    line: usize,
    width: usize,
}

impl Chunk<'_> {
    /// Writes `parts` if all fit (leaving room for the final newline); false when full.
    fn put(&mut self, parts: &[&[u8]]) -> bool {
        let n: usize = parts.iter().map(|p| p.len()).sum();
        if self.len + n + 1 > self.out.len() {
            return false;
        }
        for p in parts {
            self.out[self.len..self.len + p.len()].copy_from_slice(p);
            self.len += p.len();
        }
        self.line += n;
        true
    }
    fn newline(&mut self, rng: &mut Rng) -> bool {
        let fits = self.put(&[b"\n"]);
        self.line = 0;
        self.width = rng.range(LINE_WIDTH) as usize;
        fits
    }
    /// Spaces, then a newline as the last byte.
    fn pad(self) {
        let (out, len) = (self.out, self.len);
        out[len..].fill(b' ');
        if let Some(last) = out.last_mut() {
            *last = b'\n';
        }
    }
}

/// `word` with its first letter in upper case (ASCII words only; `’tis` stays as it is).
fn capitalized(word: &str) -> Vec<u8> {
    let mut w = word.as_bytes().to_vec();
    if let Some(c) = w.first_mut() {
        c.make_ascii_uppercase();
    }
    w
}

/// Everything a chunk draws from, made once per text: no allocation per word.
struct Tables {
    /// [`WORDS`] as written, and capitalized.
    words: Vec<(Vec<u8>, Vec<u8>)>,
    word_cdf: Vec<u64>,
    /// `HAMLET.` headings.
    headings: Vec<Vec<u8>>,
    /// `Hamlet` (the last word of each speaker, in title case), for names in sentences.
    names: Vec<Vec<u8>>,
    speaker_cdf: Vec<u64>,
}

impl Tables {
    fn new() -> Tables {
        let last_word = |s: &str| s.split(' ').next_back().unwrap_or(s).to_ascii_lowercase();
        Tables {
            words: WORDS
                .iter()
                .map(|w| (w.as_bytes().to_vec(), capitalized(w)))
                .collect(),
            word_cdf: zipf_cdf(WORDS.len()),
            headings: SPEAKERS
                .iter()
                .map(|s| format!("{s}.").into_bytes())
                .collect(),
            names: SPEAKERS
                .iter()
                .map(|s| capitalized(&last_word(s)))
                .collect(),
            speaker_cdf: zipf_cdf(SPEAKERS.len()),
        }
    }
}

/// Fills `out` with chunk `index` of the text of `seed`.
fn fill_chunk(out: &mut [u8], seed: u64, index: u64, t: &Tables) {
    let mut rng = Rng::new(seed, index);
    let mut c = Chunk {
        out,
        len: 0,
        line: 0,
        width: 0,
    };
    loop {
        let heading = &t.headings[draw(&t.speaker_cdf, &mut rng)];
        if !(c.put(&[heading]) && c.newline(&mut rng)) {
            return c.pad();
        }
        for _ in 0..rng.range(PARAGRAPH_SENTENCES) {
            let n = rng.range(SENTENCE_WORDS);
            for k in 0..n {
                let word: &[u8] = if rng.one_in(NAME_EVERY) {
                    &t.names[draw(&t.speaker_cdf, &mut rng)]
                } else {
                    let (lower, upper) = &t.words[draw(&t.word_cdf, &mut rng)];
                    if k == 0 || c.line == 0 { upper } else { lower }
                };
                let end: &[u8] = if k + 1 == n {
                    match rng.next() % 20 {
                        0..=13 => b".",
                        14..=16 => b"?",
                        17..=18 => b"!",
                        _ => b";",
                    }
                } else if rng.one_in(COMMA_EVERY) {
                    b","
                } else {
                    b""
                };
                let sep: &[u8] = if c.line == 0 { b"" } else { b" " };
                if !c.put(&[sep, word, end]) {
                    return c.pad();
                }
                if c.line >= c.width && !c.newline(&mut rng) {
                    return c.pad();
                }
            }
        }
        if c.line > 0 && !c.newline(&mut rng) {
            return c.pad();
        }
        if !c.newline(&mut rng) {
            return c.pad();
        }
    }
}

/// `len` bytes of English-like text for `seed` (see the [module docs](self)), generated on
/// every core. The same bytes for the same `(len, seed)` on every machine.
pub fn english_text(len: usize, seed: u64) -> Vec<u8> {
    let tables = Tables::new();
    let mut out = vec![0u8; len];
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut groups: Vec<Vec<(usize, &mut [u8])>> = (0..cores).map(|_| Vec::new()).collect();
    for (k, chunk) in out.chunks_mut(CHUNK_BYTES).enumerate() {
        groups[k % cores].push((k, chunk));
    }
    std::thread::scope(|s| {
        for group in groups {
            let tables = &tables;
            s.spawn(move || {
                for (k, chunk) in group {
                    fill_chunk(chunk, seed, k as u64, tables);
                }
            });
        }
    });
    out
}
