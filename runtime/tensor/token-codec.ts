/**
 * Text ↔ token ids for a generator, from the files a Hugging Face export carries beside its model:
 * tokenizer.json and tokenizer_config.json (read by @huggingface/tokenizers, the maintained pure-JS
 * port of HF's tokenizers — the same pre-tokenizers, BPE / WordPiece / Unigram models, added tokens
 * and decoders, no native code, so it runs under Node, Bun, Deno and in a browser), the chat template
 * (rendered by @huggingface/jinja, the Jinja subset HF templates are written in), and
 * generation_config.json / config.json (end-of-sequence tokens, the model's length).
 */
import { Template } from "@huggingface/jinja";
import { Tokenizer } from "@huggingface/tokenizers";
import { generationConfigDefaults, invalidArg } from "../core/mod.ts";
import type { SamplingParams } from "../core/mod.ts";

export interface TokenizerFiles {
  "tokenizer.json": string;
  "tokenizer_config.json"?: string;
  "generation_config.json"?: string;
  "config.json"?: string;
}

/** A chat message as OpenAI's API sends it, its content already text. */
export interface ChatMessage {
  role: string;
  content: string;
  name?: string;
}

export class TokenCodec {
  readonly #tokenizer: Tokenizer;
  readonly #template?: Template;
  readonly #special: Record<string, string>;
  /** The model's end-of-sequence tokens (generation_config.json's eos_token_id, else the tokenizer's eos_token). */
  readonly eosTokenIds: readonly number[];
  /** config.json's max_position_embeddings (else tokenizer_config.json's model_max_length), if either says. */
  readonly maxPositions?: number;
  readonly vocabSize: number;
  /** The sampling defaults generation_config.json sets (as vLLM takes them), for every protocol's requests. */
  readonly samplingDefaults: Partial<SamplingParams>;

  /** Throws INVALID_ARG naming the file at fault. */
  constructor(files: TokenizerFiles) {
    const json = (name: keyof TokenizerFiles) => {
      const text = files[name];
      if (text === undefined) return undefined;
      try {
        return JSON.parse(text) as Record<string, unknown>;
      } catch (error) {
        throw invalidArg(`${name} is not JSON: ${(error as Error).message}`);
      }
    };
    const tokenizerJson = json("tokenizer.json")!;
    const config = json("tokenizer_config.json") ?? {};
    try {
      this.#tokenizer = new Tokenizer(tokenizerJson, config);
    } catch (error) {
      throw invalidArg(`tokenizer.json could not be read: ${(error as Error).message}`);
    }
    const template = config.chat_template;
    const text = typeof template === "string" ? template : Array.isArray(template) ? (template.find((t) => t?.name === "default")?.template as string | undefined) : undefined;
    if (text) {
      try {
        this.#template = new Template(text);
      } catch (error) {
        throw invalidArg(`tokenizer_config.json's chat_template does not parse: ${(error as Error).message}`);
      }
    }
    const tokenText = (value: unknown) => (typeof value === "string" ? value : typeof (value as { content?: unknown })?.content === "string" ? (value as { content: string }).content : undefined);
    this.#special = {};
    for (const key of ["bos_token", "eos_token", "pad_token", "unk_token"]) {
      const value = tokenText(config[key]);
      if (value !== undefined) this.#special[key] = value;
    }
    const generation = json("generation_config.json") ?? {};
    const eos = generation.eos_token_id;
    const ids = (Array.isArray(eos) ? eos : eos === undefined || eos === null ? [] : [eos]).filter((v): v is number => Number.isInteger(v));
    const fromTokenizer = this.#special.eos_token === undefined ? undefined : this.#tokenizer.token_to_id(this.#special.eos_token);
    this.eosTokenIds = ids.length > 0 ? ids : fromTokenizer === undefined ? [] : [fromTokenizer];
    this.samplingDefaults = generationConfigDefaults(generation);
    const model = json("config.json") ?? {};
    const positions = [model.max_position_embeddings, model.n_positions, config.model_max_length].find((v) => Number.isInteger(v) && (v as number) > 0 && (v as number) < 2 ** 31);
    if (positions !== undefined) this.maxPositions = positions as number;
    this.vocabSize = this.#tokenizer.get_vocab(true).size;
  }

  get hasChatTemplate(): boolean {
    return this.#template !== undefined;
  }

  encode(text: string, options: { addSpecialTokens?: boolean } = {}): number[] {
    return this.#tokenizer.encode(text, { add_special_tokens: options.addSpecialTokens ?? true }).ids;
  }

  decode(ids: readonly number[], options: { skipSpecialTokens?: boolean } = {}): string {
    if (ids.length === 0) return ""; // the library refuses an empty list
    return this.#tokenizer.decode([...ids], { skip_special_tokens: options.skipSpecialTokens ?? true });
  }

  /** A token's id, for stop strings and logit_bias by text; undefined when the vocabulary lacks it. */
  tokenId(token: string): number | undefined {
    return this.#tokenizer.token_to_id(token);
  }

  /** The prompt a chat template makes of `messages` (with the assistant's turn opened). */
  chatPrompt(messages: readonly ChatMessage[], options: { addGenerationPrompt?: boolean } = {}): string {
    if (!this.#template) throw invalidArg("this model has no chat template (tokenizer_config.json's chat_template): use /v1/completions with a prompt");
    try {
      return this.#template.render({ messages, add_generation_prompt: options.addGenerationPrompt ?? true, ...this.#special });
    } catch (error) {
      // raise_exception() in a template: the messages break its rules (roles out of order…).
      throw invalidArg(`the chat template refused the messages: ${(error as Error).message}`);
    }
  }

  /** Turns tokens into text as they come, holding back a character whose bytes are not all there yet. */
  detokenizer(): { push(id: number): string; flush(): string } {
    const ids: number[] = [];
    let prefix = 0;
    let read = 0;
    const step = (final: boolean) => {
      const before = this.decode(ids.slice(prefix, read));
      const after = this.decode(ids.slice(prefix));
      if (after.length <= before.length || (!final && after.endsWith("\uFFFD"))) return "";
      prefix = read;
      read = ids.length;
      return after.slice(before.length);
    };
    return {
      push: (id) => {
        ids.push(id);
        return step(false);
      },
      flush: () => step(true),
    };
  }
}
