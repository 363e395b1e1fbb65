/** Listeners of one kind of news; one that throws does not keep the news from the others. */
export class ListenerSet<News> {
  readonly #listeners = new Set<(news: News) => void>();

  add(listener: (news: News) => void): () => void {
    // Wrapped, so the same function added twice is called twice and removed once per add.
    const entry = (news: News) => listener(news);
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  }

  emit(news: News): void {
    for (const listener of this.#listeners) {
      try {
        listener(news);
      } catch {
        // A listener's own failure is its to report; the others still hear.
      }
    }
  }
}
